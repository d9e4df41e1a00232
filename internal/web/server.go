package web

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// TLSFiles names the certificate files of a listener. ClientCA, when set,
// makes the listener require and verify client certificates, as the real
// banking API does (clientcert.go).
type TLSFiles struct {
	Cert, Key, ClientCA string
	// BrowserPaths are the paths a listener with ClientCA serves without
	// a client certificate: pages a person's browser opens (the banking
	// login form), which the provider serves from a host of its own that
	// asks for none.
	BrowserPaths []string
}

// Enabled reports whether HTTPS is configured.
func (t TLSFiles) Enabled() bool { return t.Cert != "" || t.Key != "" }

// Listener is one bound, not yet serving, HTTP listener.
type Listener struct {
	Name string
	ln   net.Listener // what Serve accepts from: raw, or TLS over raw
	raw  net.Listener // the bound TCP listener
	tcfg *tls.Config  // nil: plain HTTP
	srv  *http.Server
	tls  bool
}

// Listen binds addr for a named service. Binding happens before any serving
// so that a port in use fails start-up at once with the service's name.
func Listen(name, addr string, h http.Handler, tlsFiles TLSFiles, log *slog.Logger) (*Listener, error) {
	// An API's listener answers net/http's refusals of requests it cannot
	// take as HTTP in the API's envelope (refusal.go); others (the
	// metrics listener) keep net/http's plain text.
	var rf *refuser
	if b, ok := h.(*builtAPI); ok && b.api.Errors != nil {
		rf = &refuser{api: b.api.Name, errs: b.api.Errors, log: log, refused: b.platform.Metrics.refusedCounter()}
	}
	var tcfg *tls.Config
	if tlsFiles.Enabled() {
		// An HTTP listener asks for a client certificate and verifies
		// one that is sent, but takes a connection without one, so that
		// such a request is answered as the provider answers it
		// (requireClientCert) rather than cut off in the handshake.
		c, err := tlsFiles.config(log, tls.VerifyClientCertIfGiven)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		tcfg = c
		if tlsFiles.ClientCA != "" {
			h = gateClientCert(h, tlsFiles.BrowserPaths)
		}
	}
	if b, ok := h.(*builtAPI); ok {
		// Served without the wrapper BuildOn returns, a request costs
		// no call more than the platform's layers.
		h = b.Handler
	}
	raw, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s: listen on %s: %w", name, addr, err)
	}
	if rf != nil {
		// Beneath TLS and beneath the connection cap (LimitConnections
		// wraps raw), so that the server still sees the *tls.Conn it
		// needs; see refusingConn for what that leaves uncovered.
		raw = refusingListener{Listener: raw, rf: rf}
	}
	// Above the refusals and beneath TLS and the connection cap: a
	// handler's InOneWrite gathers its message's writes on it.
	raw = oneWriteListener{Listener: raw}
	ln := raw
	if tcfg != nil {
		ln = tls.NewListener(raw, tcfg)
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       2 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		ConnContext:       withGathering,
	}
	return &Listener{Name: name, ln: ln, raw: raw, tcfg: tcfg, srv: srv, tls: tcfg != nil}, nil
}

// TLS reports whether the listener serves HTTPS.
func (l *Listener) TLS() bool { return l.tls }

// Addr is the bound address (useful with port 0).
func (l *Listener) Addr() net.Addr { return l.ln.Addr() }

// Serve serves until Shutdown; it returns nil after a graceful shutdown.
func (l *Listener) Serve() error {
	err := l.srv.Serve(l.ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown stops accepting, lets in-flight requests and streams finish until
// ctx ends, then closes what is left. A listener that never served is
// unbound too (the server closes only the listeners Serve was given).
func (l *Listener) Shutdown(ctx context.Context) error {
	err := l.srv.Shutdown(ctx)
	if err != nil {
		_ = l.srv.Close()
	}
	_ = l.ln.Close()
	return err
}

// RegisterOnShutdown runs f when shutdown begins (streams use it to finish).
func (l *Listener) RegisterOnShutdown(f func()) { l.srv.RegisterOnShutdown(f) }
