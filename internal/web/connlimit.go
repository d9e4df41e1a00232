package web

import (
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// connLimiter caps the connections one listener holds open. Without a cap a
// client opening connections faster than they time out (ReadHeaderTimeout
// 10 s, ReadTimeout and IdleTimeout 2 min) holds a goroutine and a file
// descriptor for each, until the process runs out of descriptors and
// accept fails for everyone.
//
// At the cap it does what nginx does with its worker_connections: it first
// closes the connection that has been idle between keep-alive requests the
// longest, which costs its client only a reconnect, and only when no
// connection is idle does it stop accepting until one closes, leaving new
// connections in the kernel's backlog. A connection that turns active just
// as it is chosen loses its request, as on any server closing idle
// keep-alive connections; HTTP clients expect that and retry idempotent
// requests on a fresh connection.
type connLimiter struct {
	net.Listener
	max int

	mu      sync.Mutex
	open    int
	idle    map[net.Conn]time.Time // idle since, by the conn the server sees
	changed chan struct{}          // a slot came free or a conn went idle; one pending signal
	done    chan struct{}          // the listener closed
	once    sync.Once

	openGauge prometheus.Gauge   // nil: no metrics
	shed      prometheus.Counter // idle connections closed at the cap
	waited    prometheus.Counter // accepts that waited for a slot
}

// newConnLimiter caps ln at max, counted in m under name (nil: no series).
func newConnLimiter(ln net.Listener, max int, name string, m *ConnMetrics) *connLimiter {
	cl := &connLimiter{Listener: ln, max: max, idle: map[net.Conn]time.Time{},
		changed: make(chan struct{}, 1), done: make(chan struct{})}
	if m != nil {
		cl.openGauge = m.open.WithLabelValues(name)
		cl.shed = m.shed.WithLabelValues(name)
		cl.waited = m.waited.WithLabelValues(name)
	}
	return cl
}

// Accept takes the next connection from the kernel and then finds it a
// slot: at the cap it closes the connection idle the longest, or with none
// idle waits until one closes or goes idle. Accepting first keeps the cap
// from acting ahead of a client that has not come (reserving a slot before
// accepting would close an idle connection the moment the cap was
// reached); while it waits, further clients wait in the kernel's backlog,
// so the process holds at most one connection over the cap.
func (l *connLimiter) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	waited := false
	for {
		l.mu.Lock()
		if l.open < l.max {
			l.open++
			l.mu.Unlock()
			break
		}
		victim := l.oldestIdleLocked()
		l.mu.Unlock()
		if victim != nil {
			// Closing it releases its slot through countedConn.Close
			// before Close returns, so the loop finds the slot free.
			if l.shed != nil {
				l.shed.Inc()
			}
			_ = victim.Close()
			continue
		}
		if !waited && l.waited != nil {
			l.waited.Inc()
		}
		waited = true
		select {
		case <-l.changed:
		case <-l.done:
			_ = c.Close()
			return nil, net.ErrClosed
		}
	}
	if l.openGauge != nil {
		l.openGauge.Inc()
	}
	return &countedConn{Conn: c, l: l}, nil
}

// oldestIdleLocked picks the connection idle the longest and forgets it,
// so that a second Accept racing this one does not close it again.
func (l *connLimiter) oldestIdleLocked() net.Conn {
	var victim net.Conn
	var since time.Time
	for c, t := range l.idle {
		if victim == nil || t.Before(since) {
			victim, since = c, t
		}
	}
	if victim != nil {
		delete(l.idle, victim)
	}
	return victim
}

func (l *connLimiter) release() {
	l.mu.Lock()
	l.open--
	l.mu.Unlock()
	l.signal()
}

// signal wakes an Accept waiting at the cap; a signal already pending
// is enough, since the waiter looks at the whole state again.
func (l *connLimiter) signal() {
	select {
	case l.changed <- struct{}{}:
	default:
	}
}

// connState is the http.Server's ConnState hook: it keeps the set of idle
// keep-alive connections the cap may close. The conn is the one the server
// sees (a *tls.Conn under TLS), whose Close reaches countedConn.
func (l *connLimiter) connState(c net.Conn, s http.ConnState) {
	l.mu.Lock()
	if s == http.StateIdle {
		l.idle[c] = time.Now()
	} else {
		delete(l.idle, c)
	}
	l.mu.Unlock()
	if s == http.StateIdle {
		l.signal()
	}
}

func (l *connLimiter) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// countedConn gives its slot back once, on its first Close.
type countedConn struct {
	net.Conn
	l    *connLimiter
	once sync.Once
}

// CloseWrite passes the TCP half-close on: net/http sends it after a 431
// (closeWriteAndWait), so that the client reads the answer before the
// connection resets, and does without it when the conn it sees has none.
func (c *countedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// NetConn is the connection beneath, for InOneWrite to find its
// gatheringConn through the cap as through TLS.
func (c *countedConn) NetConn() net.Conn { return c.Conn }

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		if c.l.openGauge != nil {
			c.l.openGauge.Dec()
		}
		c.l.release()
	})
	return err
}

// ConnMetrics are the connection cap's series, shared by every listener
// and told apart by the listener label.
type ConnMetrics struct {
	open   *prometheus.GaugeVec
	shed   *prometheus.CounterVec
	waited *prometheus.CounterVec
}

// NewConnMetrics registers the connection series on m's registry.
func (m *Metrics) NewConnMetrics() *ConnMetrics {
	cm := &ConnMetrics{
		open: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "partnerapi_http_open_connections", Help: "Connections a listener holds open (with --max-connections).",
		}, []string{"listener"}),
		shed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "partnerapi_http_idle_connections_closed_total",
			Help: "Idle keep-alive connections closed to make room for a new one at --max-connections.",
		}, []string{"listener"}),
		waited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "partnerapi_http_accept_waits_total",
			Help: "Times a listener at --max-connections with no idle connection stopped accepting until one closed.",
		}, []string{"listener"}),
	}
	m.Registry.MustRegister(cm.open, cm.shed, cm.waited)
	return cm
}

// LimitConnections caps the connections the listener holds open at max
// (0 or less: no cap). It must be called before Serve.
func (l *Listener) LimitConnections(max int, m *ConnMetrics) {
	if max <= 0 {
		return
	}
	// The cap counts TCP connections under the TLS layer: the server must
	// still see the *tls.Conn it type-asserts for the handshake and the
	// client certificate, and that conn's Close reaches countedConn.
	cl := newConnLimiter(l.raw, max, l.Name, m)
	l.raw, l.ln = cl, cl
	if l.tcfg != nil {
		l.ln = tls.NewListener(cl, l.tcfg)
	}
	l.srv.ConnState = cl.connState
}

// LimitListener caps the connections of a listener that is not an HTTP/1
// server's (the gRPC port) at max, counted in m under name (nil: no
// series). It has no idle state to look at, so at the cap new connections
// wait in the backlog until one closes.
func LimitListener(ln net.Listener, name string, max int, m *ConnMetrics) net.Listener {
	if max <= 0 {
		return ln
	}
	return newConnLimiter(ln, max, name, m)
}
