package web

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"testing"
)

// benchWriter is a reusable ResponseWriter, so the benchmark measures the
// platform and not a recorder's allocations.
type benchWriter struct {
	h      http.Header
	status int
	n      int
}

func (w *benchWriter) Header() http.Header         { return w.h }
func (w *benchWriter) WriteHeader(code int)        { w.status = code }
func (w *benchWriter) Write(b []byte) (int, error) { w.n += len(b); return len(b), nil }

// BenchmarkPlatformPOST measures what the platform adds to a 1 KB POST
// answered 201 with a 600-byte body, layer set by layer set, against the
// handler alone. The access log writes to io.Discard through slog's text
// handler, as the banking bench does.
func BenchmarkPlatformPOST(b *testing.B) {
	body := bytes.Repeat([]byte("x"), 1024)
	resp := bytes.Repeat([]byte("y"), 600)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write(resp)
	})
	errs := func(w http.ResponseWriter, r *http.Request, status int, err error) { w.WriteHeader(status) }
	build := func(level slog.Level) http.Handler {
		metrics := NewMetrics("bench")
		mux := NewMux("bench", errs, metrics)
		mux.Handle("POST", "/fintech/api/v1/payments", handler)
		log := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: level}))
		return API{Name: "banking", Handler: mux, Errors: errs}.Build(log, metrics)
	}
	cases := []struct {
		name string
		h    http.Handler
	}{
		{"bare", handler},
		{"platform", build(slog.LevelInfo)},
		{"platform-nolog", build(slog.LevelError)},
	}
	u, _ := url.Parse("http://127.0.0.1:8080/fintech/api/v1/payments")
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			rd := bytes.NewReader(body)
			w := &benchWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				rd.Reset(body)
				r := &http.Request{Method: "POST", URL: u, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
					Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(rd),
					ContentLength: int64(len(body)), RemoteAddr: "127.0.0.1:40000", RequestURI: u.Path}
				r = r.WithContext(context.Background())
				clear(w.h)
				c.h.ServeHTTP(w, r)
				if w.status != http.StatusCreated {
					b.Fatalf("status %d", w.status)
				}
			}
		})
	}
}
