package web

import (
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
)

// A handler's Write and Flush do not reach the socket as one write: an
// HTTP/1 connection's output passes through net/http's 4 KiB buffer, so a
// larger message leaves in pieces, the first of them at the buffer's size.
// A client that parses every read on its own (the GigaChat npm SDK
// JSON-parses each read of a stream, reference assistant §3.4 rule 4)
// fails on an event split so. InOneWrite gathers the writes of one message
// on the connection beneath net/http (and beneath TLS, so that the records
// leave together too) and passes them on in one write.

// oneWriteListener hands out connections that can gather writes.
type oneWriteListener struct{ net.Listener }

func (l oneWriteListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &gatheringConn{Conn: c}, nil
}

// gatheringConn passes writes on at once except between gather and send,
// when it keeps them and then writes them as one.
type gatheringConn struct {
	net.Conn
	// gathering is read without mu on every write, so that a connection
	// that never gathers (every banking and smart-home answer) pays one
	// atomic load a write; mu guards buf and the switch.
	gathering atomic.Bool
	mu        sync.Mutex
	buf       []byte
}

// maxKeptGather bounds the buffer a connection keeps between messages, so
// that one large event does not pin its size for the connection's life.
const maxKeptGather = 64 << 10

func (c *gatheringConn) Write(p []byte) (int, error) {
	if c.gathering.Load() {
		c.mu.Lock()
		if c.gathering.Load() {
			c.buf = append(c.buf, p...)
			c.mu.Unlock()
			return len(p), nil
		}
		c.mu.Unlock()
	}
	return c.Conn.Write(p)
}

func (c *gatheringConn) gather() {
	c.mu.Lock()
	c.gathering.Store(true)
	c.mu.Unlock()
}

// send writes what was gathered in one write and stops gathering.
func (c *gatheringConn) send() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gathering.Store(false)
	if len(c.buf) == 0 {
		return nil
	}
	_, err := c.Conn.Write(c.buf)
	if cap(c.buf) > maxKeptGather {
		c.buf = nil
	} else {
		c.buf = c.buf[:0]
	}
	return err
}

// CloseWrite passes the TCP half-close on (net/http sends it after a 431).
func (c *gatheringConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

type gatheringKey struct{}

// withGathering is an http.Server's ConnContext: it puts the connection's
// gatheringConn, beneath TLS and the connection cap, in the context of
// every request on it.
func withGathering(ctx context.Context, c net.Conn) context.Context {
	for c != nil {
		if g, ok := c.(*gatheringConn); ok {
			return context.WithValue(ctx, gatheringKey{}, g)
		}
		u, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			break
		}
		c = u.NetConn()
	}
	return ctx
}

// InOneWrite runs write, which writes one message of r's response and
// flushes it, so that the message reaches the socket in one write. Where
// the connection cannot gather (HTTP/2, whose frames its own goroutine
// writes, or a server not started by Listen) it runs write alone.
func InOneWrite(r *http.Request, write func() error) error {
	g, _ := r.Context().Value(gatheringKey{}).(*gatheringConn)
	if g == nil || r.ProtoMajor != 1 {
		return write()
	}
	g.gather()
	err := write()
	if serr := g.send(); err == nil {
		err = serr
	}
	return err
}
