package main

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

// TestRawClient checks the benchmark client against net/http's server:
// keep-alive reuse, the request it sends, and the answers it refuses.
func TestRawClient(t *testing.T) {
	var requests atomic.Int64
	url, stop, err := serveLoopback(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		switch r.URL.Path {
		case "/ok":
			if r.Header.Get("Authorization") != "Basic eDp5" || r.Method != "GET" {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			_, _ = w.Write([]byte("hello"))
		case "/chunked":
			w.(http.Flusher).Flush()
			_, _ = w.Write([]byte("streamed"))
		case "/close":
			w.Header().Set("Connection", "close")
			_, _ = w.Write([]byte("bye"))
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	hdr := http.Header{"Authorization": {"Basic eDp5"}}
	c := newRawClient(url, "/ok", hdr, 1)
	defer c.close()
	for range 3 {
		status, n, err := c.get()
		if err != nil || status != 200 || n != len("hello") {
			t.Fatalf("get: %d %d %v", status, n, err)
		}
	}
	if requests.Load() != 3 || len(c.idle) != 1 {
		t.Errorf("%d requests, %d idle connections", requests.Load(), len(c.idle))
	}
	if _, _, err := newRawClient(url, "/chunked", hdr, 1).get(); err == nil || !strings.Contains(err.Error(), "chunked") {
		t.Errorf("chunked answer: %v", err)
	}
	cl := newRawClient(url, "/close", hdr, 1)
	if status, n, err := cl.get(); err != nil || status != 200 || n != 3 || len(cl.idle) != 0 {
		t.Errorf("Connection: close: %d %d %v, %d idle", status, n, err, len(cl.idle))
	}
}
