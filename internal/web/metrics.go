package web

import (
	"net/http"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync/atomic"
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
	// refused counts the requests net/http refused before any handler
	// ran (refusal.go): no route, method or latency is known for them,
	// so they are counted apart from partnerapi_http_requests_total.
	refused *prometheus.CounterVec
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
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "partnerapi_http_refused_requests_total",
			Help: "Requests net/http refused before any handler ran (headers too large, malformed, unknown Transfer-Encoding or Expect, HTTP version, plain HTTP on HTTPS), answered in the API's envelope, by API and status.",
		}, []string{"api", "status"}),
	}
	build := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "partnerapi_build_info", Help: "Build information; always 1.",
	}, []string{"version", "goversion", "revision"})
	build.WithLabelValues(version, runtime.Version(), revision()).Set(1)
	reg.MustRegister(m.requests, m.latency, m.inflight, m.refused, build,
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

// StandaloneHandler serves the registry at GET /metrics and nothing else,
// for a listener of its own (serve's --metrics-addr): every API's series
// in one scrape, on an address the operator keeps off the partners'
// networks. Any other path is a plain 404.
func (m *Metrics) StandaloneHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	return mux
}

// instrument counts and times one route. The children for the route's own
// method are resolved once, and the request counter per status on first
// use, so a request costs no label hashing; other methods (HEAD on a GET
// route) take the general path.
func (m *Metrics) instrument(api, route, method string, h http.Handler) http.Handler {
	if m == nil {
		return h
	}
	rm := &routeMetrics{m: m, api: api, route: route, method: method, latency: m.latency.WithLabelValues(api, route, method)}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := startOf(r.Context())
		sw := wrap(w)
		h.ServeHTTP(sw, r)
		if r.Method != method {
			m.requests.WithLabelValues(api, route, r.Method, strconv.Itoa(sw.Status())).Inc()
			m.latency.WithLabelValues(api, route, r.Method).Observe(time.Since(start).Seconds())
			return
		}
		rm.counter(sw.Status()).Inc()
		rm.latency.Observe(time.Since(start).Seconds())
	})
}

// routeMetrics are one route's resolved metric children for its method.
type routeMetrics struct {
	m                  *Metrics
	api, route, method string
	latency            prometheus.Observer
	byStatus           [500]atomic.Pointer[counterChild] // statuses 100-599
}

type counterChild struct{ prometheus.Counter }

func (rm *routeMetrics) counter(status int) prometheus.Counter {
	if status < 100 || status > 599 {
		return rm.m.requests.WithLabelValues(rm.api, rm.route, rm.method, strconv.Itoa(status))
	}
	slot := &rm.byStatus[status-100]
	if c := slot.Load(); c != nil {
		return c.Counter
	}
	// Racing first uses resolve the same child; either pointer is fine.
	c := &counterChild{rm.m.requests.WithLabelValues(rm.api, rm.route, rm.method, strconv.Itoa(status))}
	slot.Store(c)
	return c.Counter
}

func (m *Metrics) observeUnmatched(api string, status int) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(api, "unmatched", "", strconv.Itoa(status)).Inc()
}

// refusedCounter is the counter of refusals, nil without metrics.
func (m *Metrics) refusedCounter() *prometheus.CounterVec {
	if m == nil {
		return nil
	}
	return m.refused
}

// inflightGauge is the in-flight gauge of one API, resolved once per
// listener; nil without metrics.
func (m *Metrics) inflightGauge(api string) prometheus.Gauge {
	if m == nil {
		return nil
	}
	return m.inflight.WithLabelValues(api)
}
