package web

import (
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"partnerapi/internal/testenv"
)

// refusalCases are requests net/http refuses before any handler runs, with
// the status and reason it refuses each with.
var refusalCases = []struct {
	name   string
	req    string
	status int
	reason string
}{
	{"headers over MaxHeaderBytes", "GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", http.DefaultMaxHeaderBytes+64<<10) + "\r\n\r\n",
		http.StatusRequestHeaderFieldsTooLarge, ""},
	{"malformed Host", "GET / HTTP/1.1\r\nHost: a b\r\n\r\n", http.StatusBadRequest, "malformed Host header"},
	{"missing Host", "GET / HTTP/1.1\r\n\r\n", http.StatusBadRequest, "missing required Host header"},
	{"invalid header name", "GET / HTTP/1.1\r\nHost: x\r\nBad Name: v\r\n\r\n", http.StatusBadRequest, "invalid header name"},
	// textproto refuses the control byte before net/http looks at it.
	{"control byte in a header value", "GET / HTTP/1.1\r\nHost: x\r\nX-V: a\x01b\r\n\r\n", http.StatusBadRequest, ""},
	{"unknown Transfer-Encoding", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", http.StatusNotImplemented, "unsupported transfer encoding"},
	{"HTTP/2.0 request line", "GET / HTTP/2.0\r\nHost: x\r\n\r\n", http.StatusHTTPVersionNotSupported, "unsupported protocol version"},
	{"malformed request line", "GARBAGE\r\n\r\n", http.StatusBadRequest, ""},
	{"unknown Expect", "POST / HTTP/1.1\r\nHost: x\r\nExpect: something-unknown\r\nContent-Length: 3\r\n\r\nabc",
		http.StatusExpectationFailed, "unsupported Expect header"},
}

// envelopeErrors is a test API's envelope: the status and what the
// platform told it.
func envelopeErrors(w http.ResponseWriter, r *http.Request, status int, err error) {
	var mr *MalformedRequest
	reason := "not a refusal"
	if errors.As(err, &mr) {
		reason = mr.Reason
	}
	id, made := OwnRequestID(r.Context())
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"status": status, "reason": reason, "ref": id, "made": made})
}

// serveRefusals serves h as a built API on a plain listener (tls: on an
// HTTPS one) and returns its address.
func serveRefusals(t *testing.T, h http.Handler, tlsFiles TLSFiles, log *testenv.LogBuffer) string {
	t.Helper()
	lg := slog.New(NewTextHandler(log, nil))
	built := API{Name: "test", Handler: h, Errors: envelopeErrors}.Build(lg, nil)
	ln, err := Listen("test", "127.0.0.1:0", built, tlsFiles, lg)
	if err != nil {
		t.Fatal(err)
	}
	ln.LimitConnections(16, nil)
	go func() { _ = ln.Serve() }()
	t.Cleanup(func() { _ = ln.Shutdown(t.Context()) })
	return ln.Addr().String()
}

// Every request net/http refuses before a handler runs is answered in the
// API's envelope, with net/http's status, Content-Length, Connection: close,
// an X-Request-Id the envelope takes as the platform's own, and a log line
// that carries it. Before, each was net/http's text/plain.
func TestRefusalInEnvelope(t *testing.T) {
	logs := &testenv.LogBuffer{}
	addr := serveRefusals(t, http.NotFoundHandler(), TLSFiles{}, logs)
	dial := func() (net.Conn, error) { return net.Dial("tcp", addr) }
	for _, tc := range refusalCases {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := testenv.RawExchange(t, dial, tc.req)
			checkEnvelope(t, resp, body, tc.status, tc.reason, logs)
			if resp.ProtoMinor != 1 {
				t.Errorf("answered in %s", resp.Proto)
			}
		})
	}
}

// checkEnvelope holds an answer to envelopeErrors' form for a refusal.
func checkEnvelope(t *testing.T, resp *http.Response, body []byte, status int, reason string, logs *testenv.LogBuffer) {
	t.Helper()
	if resp.StatusCode != status || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("%d %q %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	if !resp.Close {
		t.Error("no Connection: close")
	}
	if resp.Header.Get("Date") == "" {
		t.Error("no Date")
	}
	if cl := resp.Header.Get("Content-Length"); cl != strconv.Itoa(len(body)) {
		t.Errorf("Content-Length %q for %d bytes", cl, len(body))
	}
	var got struct {
		Status int
		Reason string
		Ref    string
		Made   bool
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	id := resp.Header.Get("X-Request-Id")
	if got.Status != status || got.Reason != reason || got.Ref != id || !got.Made || len(id) != 36 {
		t.Errorf("envelope %+v, X-Request-Id %q", got, id)
	}
	if !strings.Contains(logs.String(), "request_id="+id) {
		t.Errorf("no log line with request_id=%s:\n%s", id, logs.String())
	}
}

// Plain HTTP sent to an HTTPS listener is refused under TLS, onto the TCP
// connection: in the envelope too, as HTTP/1.0 as net/http answers it.
func TestRefusalOfPlainHTTPOnHTTPS(t *testing.T) {
	dir := t.TempDir()
	cert, key, _, _ := writeCert(t, dir, "server", nil, nil)
	logs := &testenv.LogBuffer{}
	addr := serveRefusals(t, http.NotFoundHandler(), TLSFiles{Cert: cert, Key: key}, logs)
	resp, body := testenv.RawExchange(t, func() (net.Conn, error) { return net.Dial("tcp", addr) }, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	checkEnvelope(t, resp, body, http.StatusBadRequest, "client sent an HTTP request to an HTTPS server", logs)
	if resp.Proto != "HTTP/1.0" {
		t.Errorf("answered in %s", resp.Proto)
	}
	// The listener offers no HTTP/2 (its config names no ALPN protocol),
	// so HTTP/2's own refusals (RST_STREAM, GOAWAY, its 431 page) never
	// reach a client of it: over TLS too, every request is HTTP/1.x.
	tc, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2", "http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	if p := tc.ConnectionState().NegotiatedProtocol; p == "h2" {
		t.Errorf("negotiated %q", p)
	}
	_ = tc.Close()
	// Inside TLS the refusals stay net/http's (refusingConn says why).
	tlsDial := func() (net.Conn, error) {
		return tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true})
	}
	resp, body = testenv.RawExchange(t, tlsDial, "GET / HTTP/1.1\r\nHost: a b\r\n\r\n")
	if resp.StatusCode != http.StatusBadRequest || string(body) != "400 Bad Request: malformed Host header" {
		t.Errorf("inside TLS: %d %q", resp.StatusCode, body)
	}
}

// Handler answers pass untouched, among them the ones nearest net/http's
// refusals: text/plain with Connection: close, set by the handler or by
// the server for a request that asked for it, the body the status line's
// tail, Date removed.
func TestRefusalLeavesHandlerAnswers(t *testing.T) {
	cases := []struct {
		name   string
		req    string
		handle func(w http.ResponseWriter)
	}{
		{"handler sets Connection: close", "GET / HTTP/1.1\r\nHost: x\r\n\r\n", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("Connection", "close")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, "400 Bad Request")
		}},
		{"client asks for close, body sniffed", "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, "400 Bad Request")
		}},
		{"no Date, identity encoding", "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", func(w http.ResponseWriter) {
			w.Header()["Date"] = nil
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("Transfer-Encoding", "identity")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, "400 Bad Request")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			logs := &testenv.LogBuffer{}
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { tc.handle(w) })
			addr := serveRefusals(t, h, TLSFiles{}, logs)
			resp, body := testenv.RawExchange(t, func() (net.Conn, error) { return net.Dial("tcp", addr) }, tc.req)
			if resp.StatusCode != http.StatusBadRequest || string(body) != "400 Bad Request" ||
				resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" {
				t.Errorf("%d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
			}
			if strings.Contains(logs.String(), "refused before routing") {
				t.Errorf("taken for a refusal:\n%s", logs.String())
			}
		})
	}
}

// parseRefusal knows net/http's refusals byte for byte, as conn.serve
// formats them, and nothing near them.
func TestParseRefusal(t *testing.T) {
	const eh = refusalHeaders
	const date = "Mon, 30 Nov 2026 23:06:35 GMT"
	cases := []struct {
		p      string
		status int
		reason string
	}{
		{"HTTP/1.1 431 Request Header Fields Too Large" + eh + "431 Request Header Fields Too Large", 431, ""},
		{fmt.Sprintf("HTTP/1.1 %d %s%sUnsupported transfer encoding", 501, "Not Implemented", eh), 501, "unsupported transfer encoding"},
		{fmt.Sprintf("HTTP/1.1 %d %s: %s%s%d %s: %s", 400, "Bad Request", "invalid header name", eh, 400, "Bad Request", "invalid header name"), 400, "invalid header name"},
		{"HTTP/1.1 400 Bad Request" + eh + "400 Bad Request", 400, ""},
		{httpsRefusal, 400, "client sent an HTTP request to an HTTPS server"},
		// Near misses: another body, another status text, a header
		// between, a 2xx, HTTP/1.0, a trailing byte.
		{"HTTP/1.1 400 Bad Request" + eh + "400 Bad Requests", 0, ""},
		{"HTTP/1.1 400 Bad Thing" + eh + "400 Bad Thing", 0, ""},
		{"HTTP/1.1 400 Bad Request\r\nDate: x" + eh + "400 Bad Request", 0, ""},
		{"HTTP/1.1 200 OK" + eh + "200 OK", 0, ""},
		{"HTTP/1.0 400 Bad Request" + eh + "400 Bad Request", 0, ""},
		{httpsRefusal + "x", 0, ""},
		{"HTTP/1.1 501 Not Implemented" + eh + "501 Not Implemented: x", 0, ""},
		{"HTTP/1.1 4x1 Bad Request" + eh + "4x1 Bad Request", 0, ""},
		// The 417 of an unknown Expect, in HTTP/1.1, HTTP/1.0 and to a
		// HEAD; then a handler's (its X-Request-Id between), one with
		// a body, one whose Date is not net/http's, HTTP/1.2.
		{"HTTP/1.1 417 Expectation Failed\r\nConnection: close\r\nDate: " + date + "\r\nContent-Length: 0\r\n\r\n", 417, "unsupported Expect header"},
		{"HTTP/1.0 417 Expectation Failed\r\nConnection: close\r\nDate: " + date + "\r\nContent-Length: 0\r\n\r\n", 417, "unsupported Expect header"},
		{"HTTP/1.1 417 Expectation Failed\r\nConnection: close\r\nDate: " + date + "\r\n\r\n", 417, "unsupported Expect header"},
		{"HTTP/1.1 417 Expectation Failed\r\nConnection: close\r\nX-Request-Id: 1\r\nDate: " + date + "\r\nContent-Length: 0\r\n\r\n", 0, ""},
		{"HTTP/1.1 417 Expectation Failed\r\nConnection: close\r\nDate: " + date + "\r\nContent-Length: 1\r\n\r\nx", 0, ""},
		{"HTTP/1.1 417 Expectation Failed\r\nConnection: close\r\nDate: Mon, 30 Nov 2026 23:06:35 UTC\r\nContent-Length: 0\r\n\r\n", 0, ""},
		{"HTTP/1.2 417 Expectation Failed\r\nConnection: close\r\nDate: " + date + "\r\nContent-Length: 0\r\n\r\n", 0, ""},
	}
	for _, tc := range cases {
		rr, ok := parseRefusal([]byte(tc.p))
		if ok != (tc.status != 0) || rr.status != tc.status || rr.reason != tc.reason {
			t.Errorf("%q: %+v %v", tc.p, rr, ok)
		}
	}
}

// discardConn is a connection that takes every write, so that the
// benchmark measures the wrapper alone.
type discardConn struct{ net.Conn }

func (discardConn) Write(p []byte) (int, error) { return len(p), nil }

// BenchmarkRefusingConnWrite is what looking for net/http's refusals adds
// to each write of an answer: a small answer's head and body in one write
// (turned away by its status), a small error's (looked into as far as the
// header after the status line) and a larger answer (turned away by its
// length), against the connection alone.
func BenchmarkRefusingConnWrite(b *testing.B) {
	head := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Request-Id: 6f0e1c7a-3b1d-4c59-9d8e-2f4a6b7c8d90\r\n" +
		"Date: Mon, 30 Nov 2026 20:00:00 GMT\r\nContent-Length: 16\r\n\r\n"
	small := []byte(head + `{"status":"ok"}` + "\n")
	notFound := []byte(strings.Replace(head, "200 OK", "404 Not Found", 1) + `{"status":404}` + "\n")
	large := []byte(head + strings.Repeat("y", 600))
	rf := &refuser{api: "bench", errs: envelopeErrors, log: quietLog()}
	for _, w := range []struct {
		name string
		p    []byte
	}{{"small", small}, {"404", notFound}, {"large", large}} {
		for _, c := range []struct {
			name string
			conn net.Conn
		}{{"bare", discardConn{}}, {"refusing", &refusingConn{Conn: discardConn{}, rf: rf}}} {
			b.Run(w.name+"/"+c.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					_, _ = c.conn.Write(w.p)
				}
			})
		}
	}
}
