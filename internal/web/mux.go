// Package web is the HTTP platform the three APIs share: a router that knows
// its routes (so contracts can be checked against it), request ids, access
// logs, panic recovery in the API's own error envelope, body limits, metrics,
// health and contract endpoints, and listener lifecycle with graceful
// shutdown. It knows nothing of any API's domain.
package web

import (
	"errors"
	"net/http"
	"sort"
	"strings"
)

// ErrorWriter writes an error in an API's own envelope. The platform calls it
// for unknown routes, wrong methods, oversized bodies and panics, so that a
// client of any API sees only that API's error format.
type ErrorWriter func(w http.ResponseWriter, r *http.Request, status int, err error)

// Errors the platform hands to an ErrorWriter.
var (
	ErrNotFound         = errors.New("no such route")
	ErrMethodNotAllowed = errors.New("method not allowed")
	ErrBodyTooLarge     = errors.New("request body too large")
	ErrPanic            = errors.New("internal error")
	ErrUnavailable      = errors.New("service unavailable")
)

// Route is one registered method and path pattern (ServeMux syntax, e.g.
// /fintech/api/v1/payments/{externalId}).
type Route struct {
	Method  string
	Pattern string
}

// Mux is an http.ServeMux that records its routes, labels metrics by route
// and answers unknown paths and wrong methods through the API's ErrorWriter.
type Mux struct {
	api     string
	mux     *http.ServeMux
	paths   *http.ServeMux // path-only patterns: tells 405 from 404
	seen    map[string]bool
	routes  []Route
	errors  ErrorWriter
	metrics *Metrics
	fast    fastRoutes
	// literal maps each registered pattern without wildcards to the
	// methods registered for it. A path a pattern names literally is that
	// pattern's, as OpenAPI matches concrete paths before templated ones:
	// GET /payments/qr-confirmation is a wrong method on the POST-only
	// path, not GET /payments/{externalId} with that id.
	literal map[string][]string
}

// NewMux returns an empty router for one API. metrics may be nil.
func NewMux(api string, errors ErrorWriter, metrics *Metrics) *Mux {
	m := &Mux{api: api, mux: http.NewServeMux(), paths: http.NewServeMux(), seen: map[string]bool{}, errors: errors, metrics: metrics,
		literal: map[string][]string{}}
	// The catch-all takes every request no route matches, so a matched
	// request is routed once (ServeMux prefers any more specific pattern).
	m.mux.HandleFunc("/", m.unmatched)
	return m
}

// Handle registers h for method and pattern.
func (m *Mux) Handle(method, pattern string, h http.Handler) {
	m.routes = append(m.routes, Route{Method: method, Pattern: pattern})
	ih := m.metrics.instrument(m.api, pattern, method, h)
	m.mux.Handle(method+" "+pattern, ih)
	m.fast.add(method, pattern, ih)
	if !strings.Contains(pattern, "{") {
		m.literal[pattern] = append(m.literal[pattern], method)
	}
	if !m.seen[pattern] {
		m.seen[pattern] = true
		m.paths.Handle(pattern, http.NotFoundHandler())
	}
}

// HandleFunc registers f for method and pattern.
func (m *Mux) HandleFunc(method, pattern string, f http.HandlerFunc) {
	m.Handle(method, pattern, f)
}

// Routes lists the registered routes sorted by pattern and method.
func (m *Mux) Routes() []Route {
	out := append([]Route(nil), m.routes...)
	sort.Slice(out, func(i, j int) bool {
		if out[i].Pattern != out[j].Pattern {
			return out[i].Pattern < out[j].Pattern
		}
		return out[i].Method < out[j].Method
	})
	return out
}

// ServeHTTP dispatches to the matching route, or answers 404/405 in the
// API's envelope.
func (m *Mux) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if methods, ok := m.literal[r.URL.Path]; ok && !literalServes(methods, r.Method) {
		// A wildcard route of this method may match the path too; the
		// literal pattern wins, and it does not serve the method.
		m.unmatched(w, r)
		return
	}
	if rt := m.fast.match(r); rt != nil {
		rt.serve(w, r)
		return
	}
	m.mux.ServeHTTP(w, r)
}

// unmatched answers a request no route took: 405 when the path has routes
// for other methods, else 404.
func (m *Mux) unmatched(w http.ResponseWriter, r *http.Request) {
	status, err := http.StatusNotFound, ErrNotFound
	if _, pattern := m.paths.Handler(r); pattern != "" {
		status, err = http.StatusMethodNotAllowed, ErrMethodNotAllowed
		w.Header().Set("Allow", m.allowed(pattern))
	} else if servedForGET[r.URL.Path] && r.Method != http.MethodGet && r.Method != http.MethodHead {
		// The platform serves these paths in front of the API for GET
		// alone, so any other method reaches the API's router.
		status, err = http.StatusMethodNotAllowed, ErrMethodNotAllowed
		w.Header().Set("Allow", http.MethodGet)
	}
	m.metrics.observeUnmatched(m.api, status)
	m.errors(w, r, status, err)
}

// servedForGET are the platform routes (PlatformRoutes) every listener
// serves. /metrics is not among them: with serve's --metrics-addr an API
// listener does not serve it, and answers every method 404, as for any
// path it does not know; where it does serve it, BuildOn answers the other
// methods 405 itself.
var servedForGET = map[string]bool{"/healthz": true, "/openapi.yaml": true}

// literalServes reports whether a literal pattern registered for methods
// serves method; a GET route serves HEAD too, as in http.ServeMux.
func literalServes(methods []string, method string) bool {
	for _, m := range methods {
		if m == method || (m == http.MethodGet && method == http.MethodHead) {
			return true
		}
	}
	return false
}

func (m *Mux) allowed(pattern string) string {
	var methods []string
	for _, rt := range m.routes {
		if rt.Pattern == pattern {
			methods = append(methods, rt.Method)
		}
	}
	sort.Strings(methods)
	return strings.Join(methods, ", ")
}
