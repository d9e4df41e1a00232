package web

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestAccessLogBoundsClientValues holds the access line of a request whose
// path or method a client made about a MiB long, or not valid UTF-8, to a
// short, valid UTF-8 line in every handler format: before, the line carried
// the whole path and method, so one request wrote a MiB into the log.
func TestAccessLogBoundsClientValues(t *testing.T) {
	long := strings.Repeat("p", 900<<10)
	for _, format := range []string{"text", "platform-text", "json"} {
		for _, tc := range []struct{ name, method, path string }{
			{"long path", "GET", "/x/" + long},
			{"long method", strings.Repeat("M", 900<<10), "/x/1"},
			{"path not UTF-8", "GET", "/x/ab\xff\xfecd"},
		} {
			t.Run(format+"/"+tc.name, func(t *testing.T) {
				var buf bytes.Buffer
				h := logHandlerOf(format, &buf)
				errs := func(w http.ResponseWriter, r *http.Request, status int, err error) { w.WriteHeader(status) }
				mux := NewMux("bank", errs, nil)
				mux.HandleFunc("GET", "/x/{id}", func(w http.ResponseWriter, r *http.Request) {})
				api := API{Name: "bank", Handler: mux, Errors: errs}.Build(slog.New(h), nil)
				req := httptest.NewRequest("GET", "/", nil)
				req.Method, req.URL.Path = tc.method, tc.path
				api.ServeHTTP(httptest.NewRecorder(), req)
				line := buf.String()
				if len(line) > 8<<10 || !utf8.ValidString(line) || strings.Count(line, "\n") != 1 || !strings.Contains(line, "msg=request") && !strings.Contains(line, `"msg":"request"`) {
					t.Fatalf("%d bytes (valid UTF-8 %v): %.300q", len(line), utf8.ValidString(line), line)
				}
			})
		}
	}
}
