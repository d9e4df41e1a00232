package web

import (
	"context"
	"log/slog"
	"net/http"
	"path"
	"strings"
	"time"
)

// API is one of the three services as the platform sees it: its routes, its
// error envelope, its health check and its contract.
type API struct {
	Name    string       // banking | assistant | smarthome
	Handler http.Handler // usually the API's *Mux
	Errors  ErrorWriter  // the API's envelope
	Health  func(context.Context) error
	OpenAPI []byte // served at /openapi.yaml
	MaxBody int64  // request body cap; 0 means 1 MiB
	// MaxBodyPaths raises the cap for the exact paths it names (the
	// assistant's file upload), so one route's large bodies do not widen
	// every other route's.
	MaxBodyPaths map[string]int64
	// WriteTimeout bounds ordinary responses, from the request's start;
	// streams lift it (LiftWriteDeadline), and handlers that compute for
	// long before answering have it start with the answer instead
	// (DeferWriteDeadline). 0 means 2 minutes.
	WriteTimeout time.Duration
	// Prepare, when set, rewrites the request before routing (the smart-home
	// API folds doubled slashes that real agents send).
	Prepare func(*http.Request)
	// BrowserPaths are served without a client certificate when the
	// listener requires one (TLSFiles.BrowserPaths).
	BrowserPaths []string
	// LogHeaders are request headers the access log records after its own
	// attributes, each under its key, so that an operator can follow one
	// conversation or one client's requests (the assistant's X-Session-ID
	// and X-Client-ID). Only identifiers belong here, never credentials;
	// absent headers add nothing, and at most MaxLogHeaders are recorded.
	LogHeaders []LogHeader
}

// LogHeader is a request header the access log records, and its key there.
type LogHeader struct {
	Header string // e.g. X-Session-ID
	Key    string // e.g. session_id
}

// MaxLogHeaders bounds API.LogHeaders; the access line keeps their values
// in a fixed array so that recording them allocates nothing.
const MaxLogHeaders = 4

// maxLogHeaderValue bounds a recorded header's value: a client chooses it,
// and a line per request should not carry kilobytes of it.
const maxLogHeaderValue = 128

// maxLogPath bounds, in characters, the path an access line records: far
// above any path the APIs serve (the longest, a smart-home agent's command
// with a 128-character login, is under 200), so only a path a client made
// long to fill the log is cut.
const maxLogPath = 1024

// PlatformRoutes are the routes every listener serves besides its API's
// (/metrics only while Platform.MetricsElsewhere is off).
var PlatformRoutes = []Route{
	{Method: http.MethodGet, Pattern: "/healthz"},
	{Method: http.MethodGet, Pattern: "/metrics"},
	{Method: http.MethodGet, Pattern: "/openapi.yaml"},
}

// Platform is what every listener of a process wraps around its API: the
// logger and the metrics they share, and the policies an operator sets for
// all of them at once.
type Platform struct {
	Log     *slog.Logger
	Metrics *Metrics // nil: nothing is counted and /metrics is not served
	// MetricsElsewhere keeps /metrics off the API's listener (a 404 in the
	// API's envelope, like any path it does not serve) while its requests
	// are still counted: serve's --metrics-addr serves the registry on a
	// listener of its own, or nowhere, so that route names, request counts
	// and model names are not told to whoever can reach a partner API.
	MetricsElsewhere bool
	// TrustedProxies are the peers whose forwarding headers the listener
	// believes (ClientIP, the access log's remote); empty: none.
	TrustedProxies TrustedProxies
}

// Build wraps the API with the platform: health, metrics, contract, request
// ids, access log, panic recovery, body limit and write deadline. It is
// BuildOn with metrics served on the API's own listener and no trusted
// proxies.
func (a API) Build(log *slog.Logger, metrics *Metrics) http.Handler {
	return a.BuildOn(Platform{Log: log, Metrics: metrics})
}

// BuildOn is Build with the whole platform configuration.
func (a API) BuildOn(p Platform) http.Handler {
	return &builtAPI{Handler: a.build(p, nil), api: a, platform: p}
}

// builtAPI is what BuildOn returns: the API under the platform's layers,
// and what it takes to build them again with the client-certificate check
// among them, which Listen asks for when its listener requires client
// certificates (clientcert.go).
type builtAPI struct {
	http.Handler
	api      API
	platform Platform
}

// certGate is the client-certificate check a listener asks the platform
// for: the paths served without one.
type certGate struct{ open []string }

// withClientCertGate is the API with requests that lack a client
// certificate refused inside the access log and the request metrics, so
// that such a refusal is logged and counted as every other answer is.
func (b *builtAPI) withClientCertGate(open []string) http.Handler {
	return b.api.build(b.platform, &certGate{open: open})
}

// build wraps the API with the platform; gate, when set, refuses requests
// without a client certificate just inside the access log.
func (a API) build(p Platform, gate *certGate) http.Handler {
	log, metrics := p.Log, p.Metrics
	maxBody := a.MaxBody
	if maxBody == 0 {
		maxBody = 1 << 20
	}
	wt := a.WriteTimeout
	if wt == 0 {
		wt = 2 * time.Minute
	}
	top := http.NewServeMux()
	health := newHealthLog(log, a.Name)
	top.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
		defer cancel()
		w.Header().Set("Content-Type", "application/json")
		if a.Health != nil {
			if err := a.Health(ctx); err != nil {
				health.failed(err)
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = w.Write([]byte(`{"status":"unavailable"}` + "\n"))
				return
			}
			health.passed()
		}
		_, _ = w.Write([]byte(`{"status":"ok"}` + "\n"))
	})
	if metrics != nil && !p.MetricsElsewhere {
		top.Handle("GET /metrics", metrics.Handler())
		// Only here is it known that this listener serves /metrics, so
		// here another method gets the 405 of a known path (RFC 9110
		// §15.5.6) that /healthz gets from the router; served elsewhere,
		// /metrics is unknown to this listener and every method is 404.
		top.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", http.MethodGet)
			a.Errors(w, r, http.StatusMethodNotAllowed, ErrMethodNotAllowed)
		})
	}
	top.HandleFunc("GET /openapi.yaml", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		_, _ = w.Write(a.OpenAPI)
	})
	inner := withWriteDeadline(wt, withBodyLimit(maxBody, a.MaxBodyPaths, a.Errors, a.Handler))
	top.Handle("/", inner)
	h := dispatch(top, inner, a.Errors)
	if a.Prepare != nil {
		next := h
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			a.Prepare(r)
			next.ServeHTTP(w, r)
		})
	}
	h = withRecovery(log, a.Errors, h)
	if gate != nil {
		// Outside Prepare, which may rewrite the path: the open paths
		// are the ones the client asked for, as before the platform.
		h = requireClientCert(h, gate.open, a.Name, metrics)
	}
	h = withAccessLog(a.Name, log, p.TrustedProxies, a.LogHeaders, h)
	h = trackInflight(a.Name, metrics, h)
	return withRequestID(p.TrustedProxies, h)
}

func trackInflight(api string, m *Metrics, next http.Handler) http.Handler {
	g := m.inflightGauge(api)
	if g == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.Inc()
		defer g.Dec()
		next.ServeHTTP(w, r)
	})
}

// platformPaths are the paths the top-level mux of Build serves itself.
var platformPaths = map[string]bool{"/healthz": true, "/metrics": true, "/openapi.yaml": true}

// dispatch sends a request straight to the API when the top-level mux
// would only have passed it on: the path is not a platform route and is
// already clean (the mux redirects unclean paths). That saves one routing
// per request and changes no answer.
//
// A request target that is no path, the asterisk form ("GET *"; net/http
// answers "OPTIONS *" itself) or the authority form of CONNECT
// ("CONNECT host:443", a proxy's), names nothing an origin server serves.
// The top-level mux answers those outside the API's error format (a bare
// 400, a text/plain "404 page not found"), so they are refused here in it,
// as the malformed requests net/http refuses are (refusal.go).
func dispatch(top *http.ServeMux, api http.Handler, errs ErrorWriter) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.RequestURI == "*" || (r.Method == http.MethodConnect && r.URL.Path == "") {
			errs(w, r, http.StatusBadRequest, &MalformedRequest{Reason: "request target is not a path"})
			return
		}
		p := r.URL.EscapedPath()
		if r.Method == http.MethodConnect || platformPaths[p] || !isCleanPath(p) {
			top.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}

// isCleanPath reports whether p is its own cleanPath. A path that starts
// with a slash and holds no "//" and no "/." (so no "." or ".." segment)
// is clean without path.Clean's pass over it; others take that pass.
func isCleanPath(p string) bool {
	if p != "" && p[0] == '/' && !strings.Contains(p, "//") && !strings.Contains(p, "/.") {
		return true
	}
	return cleanPath(p) == p
}

// cleanPath is net/http's canonical form of a request path, which
// ServeMux redirects to when a request's path differs from it.
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	// path.Clean removes trailing slash except for root;
	// put the trailing slash back if necessary.
	if p[len(p)-1] == '/' && np != "/" {
		// Fast path for common case of p being the string we want:
		if len(p) == len(np)+1 && strings.HasPrefix(p, np) {
			np = p
		} else {
			np += "/"
		}
	}
	return np
}
