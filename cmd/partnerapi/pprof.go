package main

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"runtime"
	"strings"

	"partnerapi/internal/web"
)

// The Go runtime's profiles of a running serve (heap, allocs, goroutine,
// CPU profile, execution trace, mutex, block, threadcreate) are served by
// --pprof-addr on a listener of their own, never on an API listener and not
// on the --metrics-addr one either: a metrics listener is often opened to a
// scraper on another host, while profiles are for an operator on this one
// (over ssh -L, or kubectl port-forward, which reaches a pod's loopback). A
// profile tells more than the series do: goroutine stacks name every
// request under way and the words of their arguments, a heap profile the
// allocation sites, and a CPU profile or trace costs the process for its
// seconds. So the listener is off unless --pprof-addr is set, and an
// address off loopback is refused unless the listener serves TLS, as the
// metrics listener does under --metrics-tls (the operator listeners share
// that choice).

// pprofListenCheck refuses a --pprof-addr that would serve the profiles in
// plain HTTP off loopback: an empty host (":6060") binds every interface, a
// name other than localhost may resolve to any. tlsOn says whether the
// listener would serve HTTPS.
func pprofListenCheck(addr string, tlsOn bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--pprof-addr: %q is no host:port address: %w", addr, err)
	}
	if tlsOn || isLoopbackHost(host) {
		return nil
	}
	return fmt.Errorf("--pprof-addr: %q is not a loopback address and the listener would be plain HTTP, which would show goroutine stacks and heap sites to the network: listen on 127.0.0.1 or [::1] (reach it over ssh -L), or serve TLS with --tls-cert and --metrics-tls auto", addr)
}

// isLoopbackHost reports whether host, an address's host part, names only
// loopback: localhost, or a literal loopback IP.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// pprofHandler serves net/http/pprof's pages under /debug/pprof/ and
// nothing else. /debug/pprof/cmdline is left out: the command line may hold
// a --database-url's password or a --banking-webhook-secret, which no
// profile needs. Built on a mux of its own, so nothing depends on the
// handlers net/http/pprof's init adds to http.DefaultServeMux, which no
// listener of serve uses.
func pprofHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("POST /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/cmdline", http.NotFound)
	// Index serves the page listing the profiles and each named one
	// (heap, allocs, goroutine, mutex, block, threadcreate) by its path.
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	return mux
}

// pprofMutexFraction is the share of mutex contention events the mutex
// profile samples (1 in 100) once --pprof-addr is set: a sampled event
// costs a stack walk, and contention is rare next to the requests, so this
// is cheap and makes /debug/pprof/mutex say something. The block profile
// stays off (rate 0): it would time every channel and select wait,
// including each idle keep-alive connection's and SSE stream's.
const pprofMutexFraction = 100

// listenPprof opens the --pprof-addr listener, its address already
// checked by pprofListenCheck, with the TLS of the metrics listener.
func listenPprof(addr string, tlsFiles web.TLSFiles, log *slog.Logger) (*web.Listener, error) {
	runtime.SetMutexProfileFraction(pprofMutexFraction)
	return web.Listen("pprof", addr, pprofHandler(), tlsFiles, log)
}
