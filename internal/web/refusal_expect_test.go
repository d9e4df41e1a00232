package web

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/testenv"
)

// An Expect other than 100-continue is answered 417 in the API's envelope,
// in the request's protocol, and to a HEAD without a body; a handler's own
// 417 with Connection: close passes untouched. Before, the 417 was
// net/http's, with no body and no X-Request-Id.
func TestExpectationFailedInEnvelope(t *testing.T) {
	logs := &testenv.LogBuffer{}
	own := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		w.WriteHeader(http.StatusExpectationFailed)
	})
	addr := serveRefusals(t, own, TLSFiles{}, logs)
	dial := func() (net.Conn, error) { return net.Dial("tcp", addr) }
	for _, tc := range []struct {
		name, req string
		minor     int
	}{
		{"HTTP/1.1", "GET / HTTP/1.1\r\nHost: x\r\nExpect: something-unknown\r\n\r\n", 1},
		{"HTTP/1.0", "GET / HTTP/1.0\r\nHost: x\r\nExpect: something-unknown\r\n\r\n", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := testenv.RawExchange(t, dial, tc.req)
			checkEnvelope(t, resp, body, http.StatusExpectationFailed, "unsupported Expect header", logs)
			if resp.ProtoMinor != tc.minor {
				t.Errorf("answered in %s", resp.Proto)
			}
		})
	}
	t.Run("HEAD", func(t *testing.T) {
		c, err := dial()
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		_, _ = io.WriteString(c, "HEAD / HTTP/1.1\r\nHost: x\r\nExpect: something-unknown\r\n\r\n")
		raw, _ := io.ReadAll(c)
		head, body, _ := strings.Cut(string(raw), "\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(head+"\r\n\r\n")), &http.Request{Method: http.MethodHead})
		if err != nil {
			t.Fatalf("%q: %v", raw, err)
		}
		if resp.StatusCode != http.StatusExpectationFailed || resp.Header.Get("Content-Type") != "application/json" ||
			resp.ContentLength <= 0 || body != "" {
			t.Errorf("%q", raw)
		}
	})
	t.Run("handler's own 417", func(t *testing.T) {
		resp, body := testenv.RawExchange(t, dial, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		if resp.StatusCode != http.StatusExpectationFailed || len(body) != 0 || resp.Header.Get("Content-Type") != "" {
			t.Errorf("%d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
	})
}

// Expect: 100-continue still works through the refusing connection: the
// interim 100 comes once the handler reads the body, then its answer.
func TestExpectContinuePasses(t *testing.T) {
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		_, _ = w.Write(b)
	})
	addr := serveRefusals(t, echo, TLSFiles{}, &testenv.LogBuffer{})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	_, _ = io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
	br := bufio.NewReader(c)
	line, err := br.ReadString('\n')
	if err != nil || line != "HTTP/1.1 100 Continue\r\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	if blank, _ := br.ReadString('\n'); blank != "\r\n" {
		t.Fatalf("after the 100: %q", blank)
	}
	_, _ = io.WriteString(c, "hello")
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || string(body) != "hello" {
		t.Errorf("%d %q", resp.StatusCode, body)
	}
	// The standard client, which sends the body after the 100, too.
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/", strings.NewReader("world"))
	req.Header.Set("Expect", "100-continue")
	resp, err = (&http.Client{Transport: &http.Transport{ExpectContinueTimeout: 5 * time.Second}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "world" {
		t.Errorf("client: %d %q", resp.StatusCode, body)
	}
}
