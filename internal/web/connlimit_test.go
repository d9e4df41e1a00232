package web

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// keepAlive is one raw keep-alive HTTP/1.1 connection of a test client.
type keepAlive struct {
	c  net.Conn
	br *bufio.Reader
}

func dialKeepAlive(t *testing.T, addr string) *keepAlive {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &keepAlive{c: c, br: bufio.NewReader(c)}
}

// get sends one request and reads its answer, leaving the connection open.
func (k *keepAlive) get(path string, wait time.Duration) (string, error) {
	k.c.SetDeadline(time.Now().Add(wait))
	if _, err := io.WriteString(k.c, "GET "+path+" HTTP/1.1\r\nHost: test\r\n\r\n"); err != nil {
		return "", err
	}
	resp, err := http.ReadResponse(k.br, nil)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// closedByServer reports whether the server closed the connection: a read
// ends in EOF (or a reset) instead of timing out.
func (k *keepAlive) closedByServer(wait time.Duration) bool {
	k.c.SetReadDeadline(time.Now().Add(wait))
	_, err := k.br.ReadByte()
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return false
	}
	return err != nil
}

func startLimited(t *testing.T, max int, h http.Handler, tlsFiles TLSFiles) (*Listener, *ConnMetrics) {
	l, cm, _ := startWatched(t, max, h, tlsFiles)
	return l, cm
}

// startWatched is startLimited that also tells, on idle, the client-side
// address of each connection once the cap has recorded it idle: the
// server marks a connection idle after it has written the answer, so the
// client can read the answer before the cap knows.
func startWatched(t *testing.T, max int, h http.Handler, tlsFiles TLSFiles) (*Listener, *ConnMetrics, <-chan string) {
	t.Helper()
	l, err := Listen("banking", "127.0.0.1:0", h, tlsFiles, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	cm := NewMetrics("test").NewConnMetrics()
	l.LimitConnections(max, cm)
	idle := make(chan string, 64)
	limited := l.srv.ConnState
	l.srv.ConnState = func(c net.Conn, s http.ConnState) {
		limited(c, s)
		if s == http.StateIdle {
			// Never block the server: a test reads only the few it
			// waits for.
			select {
			case idle <- c.RemoteAddr().String():
			default:
			}
		}
	}
	go l.Serve()
	t.Cleanup(func() { l.Shutdown(context.Background()) })
	return l, cm, idle
}

// awaitIdle waits until the cap has recorded k idle, skipping the idle
// events of other connections.
func awaitIdle(t *testing.T, idle <-chan string, k *keepAlive) {
	t.Helper()
	want := k.c.LocalAddr().String()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case got := <-idle:
			if got == want {
				return
			}
		case <-timeout:
			t.Fatalf("the connection from %s was not recorded idle within 30 s", want)
		}
	}
}

// TestConnectionCapClosesTheLongestIdleFirst: at the cap a new client is
// served at once, and the room is made by closing the keep-alive
// connection idle the longest, not a busy one and not the newest. Each
// request waits until the cap has recorded the previous connection idle,
// so the connections go idle in the order the test makes, whatever the
// scheduler does with the server's goroutines.
func TestConnectionCapClosesTheLongestIdleFirst(t *testing.T) {
	l, cm, idle := startWatched(t, 3, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}), TLSFiles{})
	addr := l.Addr().String()
	var conns []*keepAlive
	for range 3 {
		k := dialKeepAlive(t, addr)
		if body, err := k.get("/", 5*time.Second); err != nil || body != "ok" {
			t.Fatalf("got %q, %v", body, err)
		}
		awaitIdle(t, idle, k)
		conns = append(conns, k)
	}
	// The newest idle one becomes the most recently used again.
	if _, err := conns[2].get("/", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	awaitIdle(t, idle, conns[2])
	fourth := dialKeepAlive(t, addr)
	if body, err := fourth.get("/", 5*time.Second); err != nil || body != "ok" {
		t.Fatalf("a new client at the cap got %q, %v", body, err)
	}
	if !conns[0].closedByServer(5 * time.Second) {
		t.Error("the connection idle the longest was not closed to make room")
	}
	// A wrong choice would have been closed before the fourth client
	// was served, so its end of file is already on the way.
	for i, k := range conns[1:] {
		if k.closedByServer(100 * time.Millisecond) {
			t.Errorf("connection %d, idle for less time, was closed", i+1)
		}
	}
	if got := metricValue(cm.shed.WithLabelValues("banking")); got != 1 {
		t.Errorf("idle connections closed: %v, want 1", got)
	}
	if got := metricValue(cm.open.WithLabelValues("banking")); got != 3 {
		t.Errorf("open connections: %v, want 3", got)
	}
}

// TestConnectionCapWaitsWhenNoneIsIdle: with every connection busy a new
// one is not served until a busy one finishes, and then it is.
func TestConnectionCapWaitsWhenNoneIsIdle(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 4)
	l, cm := startLimited(t, 2, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			started <- struct{}{}
			<-release
		}
		io.WriteString(w, "ok")
	}), TLSFiles{})
	addr := l.Addr().String()
	busy := []*keepAlive{dialKeepAlive(t, addr), dialKeepAlive(t, addr)}
	done := make(chan error, 2)
	for _, k := range busy {
		go func() { _, err := k.get("/slow", 5*time.Second); done <- err }()
		<-started
	}
	third := dialKeepAlive(t, addr)
	got := make(chan string, 1)
	go func() {
		body, err := third.get("/", 5*time.Second)
		if err != nil {
			body = err.Error()
		}
		got <- body
	}()
	select {
	case b := <-got:
		t.Fatalf("served past the cap with every connection busy: %q", b)
	case <-time.After(300 * time.Millisecond):
	}
	close(release)
	for range busy {
		if err := <-done; err != nil {
			t.Fatalf("a busy request was cut: %v", err)
		}
	}
	// The busy ones are idle now; the waiting accept closes the older.
	select {
	case b := <-got:
		if b != "ok" {
			t.Fatalf("the waiting client got %q", b)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("the waiting client was not served once a slot came free")
	}
	if w := metricValue(cm.waited.WithLabelValues("banking")); w != 1 {
		t.Errorf("accept waits: %v, want 1", w)
	}
}

// TestConnectionCapKeepsTLSAndGivesSlotsBack: under TLS the handler still
// sees the handshake's state (client certificates depend on it), and slots
// of closed connections come back: twenty short connections in turn are
// all served at a cap of one, which a slot not given back would stop at
// the second.
func TestConnectionCapKeepsTLSAndGivesSlotsBack(t *testing.T) {
	dir := t.TempDir()
	_, _, ca, caKey := writeCert(t, dir, "ca", nil, nil)
	srvCert, srvKey, _, _ := writeCert(t, dir, "server", ca, caKey)
	l, cm := startLimited(t, 1, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil || !r.TLS.HandshakeComplete {
			http.Error(w, "no TLS state", 500)
			return
		}
		io.WriteString(w, "ok")
	}), TLSFiles{Cert: srvCert, Key: srvKey})
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	for i := range 20 {
		c := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: pool}, DisableKeepAlives: true}}
		resp, err := c.Get("https://" + l.Addr().String() + "/")
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.TrimSpace(string(b)) != "ok" {
			t.Fatalf("request %d: %q", i, b)
		}
	}
	// The server sees each client's close when its connection's
	// goroutine next reads; a slot never given back still fails after
	// the 10 s, which a loaded machine's scheduling does not come near.
	deadline := time.Now().Add(10 * time.Second)
	for metricValue(cm.open.WithLabelValues("banking")) != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if open := metricValue(cm.open.WithLabelValues("banking")); open != 0 {
		t.Errorf("open connections after every client left: %v", open)
	}
}

// metricValue reads a gauge's or counter's value through a registry of
// its own, as a scrape would.
func metricValue(c prometheus.Collector) float64 {
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(c); err != nil {
		return -1
	}
	mfs, err := reg.Gather()
	if err != nil || len(mfs) != 1 || len(mfs[0].GetMetric()) != 1 {
		return -1
	}
	m := mfs[0].GetMetric()[0]
	if g := m.GetGauge(); g != nil {
		return g.GetValue()
	}
	return m.GetCounter().GetValue()
}

// TestLimitListenerWaitsAtTheCap: a listener of no HTTP/1 server (the gRPC
// port) has no idle connections to close, so at the cap the next
// connection is accepted only once one closes.
func TestLimitListenerWaitsAtTheCap(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cm := NewMetrics("test").NewConnMetrics()
	ln := LimitListener(raw, "assistant-grpc", 1, cm)
	defer ln.Close()
	accepted := make(chan net.Conn, 2)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	dial := func() net.Conn {
		c, err := net.DialTimeout("tcp", raw.Addr().String(), 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	dial()
	first := <-accepted
	dial() // completes in the kernel's backlog
	// The accept loop takes the second connection from the kernel and
	// counts its wait when its goroutine next runs, which a loaded
	// machine may put off past any fixed pause: the count is waited for
	// (a wait never counted still fails), and then no connection may
	// have come through.
	for deadline := time.Now().Add(10 * time.Second); metricValue(cm.waited.WithLabelValues("assistant-grpc")) != 1; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("accept waits: %v 10 s after the second dial, want 1", metricValue(cm.waited.WithLabelValues("assistant-grpc")))
		}
	}
	select {
	case <-accepted:
		t.Fatal("a second connection was accepted at a cap of one")
	case <-time.After(200 * time.Millisecond):
	}
	first.Close()
	select {
	case c := <-accepted:
		c.Close()
	case <-time.After(3 * time.Second):
		t.Fatal("the waiting connection was not accepted once the first closed")
	}
}

// A connection under the cap keeps the TCP half-close net/http sends after
// a 431 (closeWriteAndWait), so that the client reads the answer and EOF
// at once instead of a reset half a second later. Before, countedConn
// hid CloseWrite and net/http skipped it.
func TestConnectionCapKeepsCloseWrite(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cl := newConnLimiter(raw, 4, "test", nil)
	defer cl.Close()
	client, err := net.Dial("tcp", raw.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	c, err := cl.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cw, ok := c.(interface{ CloseWrite() error })
	if !ok {
		t.Fatalf("%T has no CloseWrite", c)
	}
	if err := cw.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	_ = client.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := client.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Fatalf("after CloseWrite the client read %d, %v", n, err)
	}
}
