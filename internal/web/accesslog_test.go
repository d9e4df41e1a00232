package web

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestAccessLogLine checks the fields of the access log line in both
// handler formats, and that neither the query string nor headers reach it.
func TestAccessLogLine(t *testing.T) {
	for _, format := range []string{"text", "platform-text", "json"} {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			h := logHandlerOf(format, &buf)
			errs := func(w http.ResponseWriter, r *http.Request, status int, err error) { w.WriteHeader(status) }
			mux := NewMux("bank", errs, nil)
			mux.HandleFunc("POST", "/pay/{id}", func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusCreated)
				_, _ = w.Write([]byte("12345"))
			})
			api := API{Name: "bank", Handler: mux, Errors: errs}.Build(slog.New(h), nil)
			req := httptest.NewRequest("POST", "/pay/7?token=secret-query", strings.NewReader("{}"))
			req.Header.Set("Authorization", "Bearer secret-header")
			req.Header.Set("X-Request-Id", "rid-1")
			req.RemoteAddr = "192.0.2.1:5555"
			api.ServeHTTP(httptest.NewRecorder(), req)
			line := buf.String()
			if strings.Contains(line, "secret") {
				t.Fatalf("a secret reached the access log: %s", line)
			}
			if format != "json" {
				for _, want := range []string{"level=INFO msg=request api=bank method=POST path=/pay/7 status=201 bytes=5 duration=",
					" request_id=rid-1 remote=192.0.2.1:5555\n"} {
					if !strings.Contains(line, want) {
						t.Fatalf("access log %q lacks %q", line, want)
					}
				}
				if !strings.HasPrefix(line, "time=") {
					t.Fatalf("access log %q has no time", line)
				}
				return
			}
			var got map[string]any
			if err := json.Unmarshal([]byte(line), &got); err != nil {
				t.Fatal(err)
			}
			want := map[string]any{"level": "INFO", "msg": "request", "api": "bank", "method": "POST", "path": "/pay/7",
				"status": 201.0, "bytes": 5.0, "request_id": "rid-1", "remote": "192.0.2.1:5555"}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("%s = %v, want %v", k, got[k], v)
				}
			}
			if _, ok := got["duration"].(float64); !ok {
				t.Errorf("duration = %v, want a number of nanoseconds", got["duration"])
			}
			if _, ok := got["time"].(string); !ok {
				t.Errorf("time = %v, want a timestamp", got["time"])
			}
		})
	}
}

// logHandlerOf is the slog handler the access-log tests write through:
// slog's text handler, the platform's ("platform-text") or slog's JSON one.
func logHandlerOf(format string, w io.Writer) slog.Handler {
	switch format {
	case "platform-text":
		return NewTextHandler(w, nil)
	case "json":
		return slog.NewJSONHandler(w, nil)
	}
	return slog.NewTextHandler(w, nil)
}
