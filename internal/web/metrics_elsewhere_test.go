package web

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// With MetricsElsewhere an API's listener answers /metrics as a path it
// does not serve, in its own envelope, while its requests are still
// counted and show on the standalone handler; /healthz and /openapi.yaml
// are as before.
func TestMetricsElsewhere(t *testing.T) {
	errs := func(w http.ResponseWriter, r *http.Request, status int, err error) {
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"envelope":%q}`, err.Error())
	}
	metrics := NewMetrics("t")
	mux := NewMux("test", errs, metrics)
	mux.HandleFunc("GET", "/hello", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "hi") })
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	a := API{Name: "test", Handler: mux, Errors: errs, OpenAPI: []byte("openapi: 3.1.0\n")}
	for _, tc := range []struct {
		name      string
		elsewhere bool
		status    int
		contains  string
	}{
		{"on the listener", false, 200, "partnerapi_http_in_flight_requests"},
		{"elsewhere", true, 404, `{"envelope":"no such route"}`},
	} {
		// Another method on /metrics: a known path's 405 where the
		// listener serves it, the unknown path's 404 where it does not.
		post := map[bool]int{false: 405, true: 404}[tc.elsewhere]
		t.Run(tc.name, func(t *testing.T) {
			h := a.BuildOn(Platform{Log: quiet, Metrics: metrics, MetricsElsewhere: tc.elsewhere})
			for _, c := range []struct {
				path     string
				status   int
				contains string
			}{
				{"/metrics", tc.status, tc.contains},
				{"/healthz", 200, `"ok"`},
				{"/openapi.yaml", 200, "openapi: 3.1.0"},
				{"/hello", 200, "hi"},
			} {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest("GET", c.path, nil))
				if rec.Code != c.status || !strings.Contains(rec.Body.String(), c.contains) {
					t.Errorf("GET %s: %d %.80q, want %d containing %q", c.path, rec.Code, rec.Body.String(), c.status, c.contains)
				}
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("POST", "/metrics", nil))
			if rec.Code != post || !strings.HasPrefix(rec.Body.String(), `{"envelope":`) {
				t.Errorf("POST /metrics: %d %.80q, want %d in the envelope", rec.Code, rec.Body.String(), post)
			}
		})
	}
	standalone := metrics.StandaloneHandler()
	rec := httptest.NewRecorder()
	standalone.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if want := `partnerapi_http_requests_total{api="test",method="GET",route="/hello",status="200"} 2`; rec.Code != 200 || !strings.Contains(rec.Body.String(), want) {
		t.Errorf("standalone /metrics: %d, lacks %s", rec.Code, want)
	}
	rec = httptest.NewRecorder()
	standalone.ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("standalone /healthz: %d, want 404", rec.Code)
	}
}
