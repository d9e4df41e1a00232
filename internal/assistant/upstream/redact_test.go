package upstream

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"partnerapi/internal/testenv"
	"strings"
	"sync"
	"testing"
	"time"
)

// secrets are the credential parts of the upstream URLs below.
var secrets = []string{"operator", "s3cret", "k3y", "t0ken"}

// No credential of a replica's URL (its user name and password, an API
// key in its query) is in an error the pool returns, which reaches the
// transports' logs and, in-band, clients, nor in the pool's log or its
// metrics labels, whichever way the replica fails.
func TestPoolErrorsRedacted(t *testing.T) {
	for _, tc := range []struct {
		name string
		fail func(*httptest.Server)
		hang bool
	}{
		{"refused", func(s *httptest.Server) { s.Close() }, false},
		{"no headers in time", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			release := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasSuffix(r.URL.Path, "/chat/completions") && tc.hang {
					select {
					case <-release:
					case <-r.Context().Done():
					}
					return
				}
				fmt.Fprint(w, `{"data":[{"id":"m"}]}`)
			}))
			defer srv.Close()
			defer close(release)
			if tc.fail != nil {
				tc.fail(srv)
			}
			var logs testenv.LogBuffer
			client := NewClient()
			client.Transport.(*http.Transport).ResponseHeaderTimeout = 200 * time.Millisecond
			base := strings.Replace(srv.URL, "http://", "http://operator:s3cret@", 1) + "/v1/?api_key=k3y&token=t0ken"
			p := NewPool("m", Served{}, []string{base}, PoolOptions{Client: client, Log: slog.New(slog.NewTextHandler(&logs, nil)), ProbeInterval: time.Hour})
			t.Cleanup(p.Close)
			_, err := hello(context.Background(), p, nil)
			if err == nil {
				t.Fatal("a failing replica answered")
			}
			var labels strings.Builder
			for _, st := range p.Stats() {
				fmt.Fprint(&labels, st.Model, st.Host)
			}
			for where, text := range map[string]string{"error": err.Error(), "log": logs.String(), "labels": labels.String()} {
				for _, s := range secrets {
					if strings.Contains(text, s) {
						t.Errorf("the %s shows %q: %s", where, s, text)
					}
				}
			}
			if !strings.Contains(logs.String(), "upstream replica down") {
				t.Errorf("no down line in the log:\n%s", logs.String())
			}
		})
	}
}

// A base URL's query (an API key a gateway takes as ?api_key=) follows
// each request's path, rather than swallowing it.
func TestBaseQueryKept(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.Path+"?"+r.URL.RawQuery)
		mu.Unlock()
		switch r.URL.Path {
		case "/gw/v1/models":
			fmt.Fprint(w, `{"data":[{"id":"m"}]}`)
		case "/gw/v1/chat/completions":
			sse(w, `{"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`,
				`{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1}}`, "[DONE]")
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	p := NewPool("m", Served{}, []string{srv.URL + "/gw/?api_key=k3y"}, PoolOptions{})
	t.Cleanup(p.Close)
	if got, err := hello(context.Background(), p, nil); err != nil || got != "ok" {
		t.Fatalf("got %q %v", got, err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, want := range []string{"/gw/v1/models?api_key=k3y", "/gw/v1/chat/completions?api_key=k3y"} {
		found := false
		for _, s := range seen {
			found = found || s == want
		}
		if !found {
			t.Errorf("no request %s among %v", want, seen)
		}
	}
}
