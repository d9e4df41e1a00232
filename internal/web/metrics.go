package web

import (
	"net/http"
	"runtime"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics holds the process's Prometheus collectors. One registry serves all
// listeners; the api label tells them apart.
type Metrics struct {
	Registry *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	inflight *prometheus.GaugeVec
}

// NewMetrics creates the registry with Go runtime, process and build info
// collectors.
func NewMetrics(version string) *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{
		Registry: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "partnerapi_http_requests_total", Help: "HTTP requests by API, route, method and status.",
		}, []string{"api", "route", "method", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "partnerapi_http_request_duration_seconds", Help: "HTTP request latency by API, route and method.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"api", "route", "method"}),
		inflight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "partnerapi_http_in_flight_requests", Help: "Requests being served, by API.",
		}, []string{"api"}),
	}
	build := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "partnerapi_build_info", Help: "Build information; always 1.",
	}, []string{"version", "goversion", "revision"})
	build.WithLabelValues(version, runtime.Version(), revision()).Set(1)
	reg.MustRegister(m.requests, m.latency, m.inflight, build,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func revision() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
	}
	return "unknown"
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{})
}

func (m *Metrics) instrument(api, route string, h http.Handler) http.Handler {
	if m == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := wrap(w)
		h.ServeHTTP(sw, r)
		m.requests.WithLabelValues(api, route, r.Method, strconv.Itoa(sw.Status())).Inc()
		m.latency.WithLabelValues(api, route, r.Method).Observe(time.Since(start).Seconds())
	})
}

func (m *Metrics) observeUnmatched(api string, status int) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(api, "unmatched", "", strconv.Itoa(status)).Inc()
}

func (m *Metrics) trackInflight(api string) func() {
	if m == nil {
		return func() {}
	}
	g := m.inflight.WithLabelValues(api)
	g.Inc()
	return g.Dec
}
