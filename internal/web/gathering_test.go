package web

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// recordingListener records the size of every write its connections make.
type recordingListener struct {
	net.Listener
	mu     sync.Mutex
	writes []int
}

func (l *recordingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &recordingConn{Conn: c, l: l}, nil
}

func (l *recordingListener) sizes() []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]int(nil), l.writes...)
}

type recordingConn struct {
	net.Conn
	l *recordingListener
}

func (c *recordingConn) Write(p []byte) (int, error) {
	c.l.mu.Lock()
	c.l.writes = append(c.l.writes, len(p))
	c.l.mu.Unlock()
	return c.Conn.Write(p)
}

// A message of 20 KB written and flushed in InOneWrite leaves in one write
// on the connection, headers included, over plain HTTP, through the
// connection cap and beneath TLS; written without it, net/http's 4 KiB
// buffer sends it in several (the control that shows what is fixed).
func TestInOneWriteSendsAMessageInOneWrite(t *testing.T) {
	dir := t.TempDir()
	certPath, keyPath, cert, _ := writeCert(t, dir, "srv", nil, nil)
	pair, err := tls.LoadX509KeyPair(certPath, keyPath)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	message := strings.Repeat("x", 20000)
	for _, tc := range []struct {
		name        string
		tls, capped bool
		gathered    bool
	}{
		{"plain", false, false, true},
		{"plain without InOneWrite", false, false, false},
		{"capped", false, true, true},
		{"tls", true, false, true},
		{"tls and capped", true, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			rec := &recordingListener{Listener: raw}
			var ln net.Listener = oneWriteListener{Listener: rec}
			if tc.capped {
				ln = newConnLimiter(ln, 4, "test", nil)
			}
			if tc.tls {
				ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{pair}})
			}
			srv := &http.Server{ConnContext: withGathering, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				write := func() error {
					w.Header().Set("Content-Type", "text/event-stream")
					if _, err := io.WriteString(w, message); err != nil {
						return err
					}
					return http.NewResponseController(w).Flush()
				}
				var err error
				if tc.gathered {
					err = InOneWrite(r, write)
				} else {
					err = write()
				}
				if err != nil {
					t.Error(err)
				}
			})}
			go srv.Serve(ln)
			t.Cleanup(func() { srv.Close() })
			c, err := net.Dial("tcp", raw.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var conn net.Conn = c
			if tc.tls {
				tc := tls.Client(c, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
				if err := tc.Handshake(); err != nil {
					t.Fatal(err)
				}
				conn = tc
			}
			before := len(rec.sizes())
			io.WriteString(conn, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
			br := bufio.NewReader(conn)
			res, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			// The chunked body's first chunk is the whole message.
			chunk := make([]byte, len(message))
			if _, err := io.ReadFull(res.Body, chunk); err != nil || !bytes.Equal(chunk, []byte(message)) {
				t.Fatalf("body: %v", err)
			}
			writes := rec.sizes()[before:]
			if len(writes) == 0 {
				t.Fatal("no writes recorded")
			}
			if tc.gathered && writes[0] < len(message) {
				t.Errorf("the message left in writes of %v bytes, want one write", writes)
			}
			if !tc.gathered && writes[0] >= len(message) {
				t.Errorf("without InOneWrite the message left in one write %v: the control shows nothing", writes)
			}
		})
	}
}

// Listen's server gathers: its connections carry a gatheringConn that its
// requests' InOneWrite finds.
func TestListenServesGatheredWrites(t *testing.T) {
	message := strings.Repeat("y", 10000)
	l, err := Listen("assistant", "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		InOneWrite(r, func() error {
			io.WriteString(w, message)
			return http.NewResponseController(w).Flush()
		})
	}), TLSFiles{}, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	// Record beneath the listener's own gathering layer.
	ow, ok := l.raw.(oneWriteListener)
	if !ok {
		t.Fatalf("Listen's connections do not gather: %T", l.raw)
	}
	rec := &recordingListener{Listener: ow.Listener}
	l.raw, l.ln = oneWriteListener{Listener: rec}, oneWriteListener{Listener: rec}
	go l.Serve()
	t.Cleanup(func() { l.Shutdown(t.Context()) })
	res, err := http.Get("http://" + l.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(body) != message {
		t.Fatalf("body of %d bytes", len(body))
	}
	if w := rec.sizes(); len(w) == 0 || w[0] < len(message) {
		t.Errorf("writes %v, want the message in the first", w)
	}
}
