package web

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"
)

// LogBuffer gathers log lines and writes them to the process's log stream
// in one write per flush instead of one per line. A server's access log is
// a line per request: written straight to stderr that is a write system
// call per request, and when stderr is a pipe (a container runtime, a
// service manager) each call also wakes the reader. LogBuffer flushes every
// interval, whenever it holds more than size bytes, when a record of level
// Warn or above is logged through FlushingHandler, and on Close. A line is
// never split between two writes, and lines keep the order they were
// written in.
//
// What a crash loses is at most one interval of lines not yet flushed; a
// panic's stack trace is written by the runtime straight to stderr and is
// not affected.
type LogBuffer struct {
	out io.Writer

	mu    sync.Mutex // guards buf and spare
	buf   []byte
	spare []byte
	size  int

	// wmu orders writes to out: a flusher takes it before it lets go of mu,
	// so two flushes reach out in the order their buffers were taken.
	wmu sync.Mutex

	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// NewLogBuffer returns a buffer in front of out that flushes every interval
// (and past size bytes). Close it to stop its timer and write what is left.
func NewLogBuffer(out io.Writer, interval time.Duration, size int) *LogBuffer {
	b := &LogBuffer{out: out, size: size, buf: make([]byte, 0, size), spare: make([]byte, 0, size),
		stop: make(chan struct{}), done: make(chan struct{})}
	go b.tick(interval)
	return b
}

func (b *LogBuffer) tick(interval time.Duration) {
	defer close(b.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			_ = b.Flush()
		case <-b.stop:
			return
		}
	}
}

// Write appends p, which a log handler hands over as one or more whole
// lines. A p larger than the buffer is written through at once, after what
// the buffer already holds.
func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	if len(b.buf)+len(p) <= b.size {
		b.buf = append(b.buf, p...)
		b.mu.Unlock()
		return len(p), nil
	}
	if err := b.flushLocked(); err != nil {
		return 0, err
	}
	// size is read under mu each time: Close sets it to zero while other
	// goroutines may still be writing.
	b.mu.Lock()
	if len(p) > b.size {
		// Too large for the buffer, or the buffer is closed: p goes
		// through at once. wmu is taken before mu is let go, so p follows
		// any flush that took the buffer before it.
		b.wmu.Lock()
		b.mu.Unlock()
		defer b.wmu.Unlock()
		return b.out.Write(p)
	}
	b.buf = append(b.buf, p...)
	b.mu.Unlock()
	return len(p), nil
}

// Flush writes what the buffer holds.
func (b *LogBuffer) Flush() error {
	b.mu.Lock()
	return b.flushLocked()
}

// flushLocked is Flush with mu held; it releases mu. The lines are written
// outside mu, so loggers keep appending to the other buffer meanwhile.
func (b *LogBuffer) flushLocked() error {
	if len(b.buf) == 0 {
		b.mu.Unlock()
		return nil
	}
	full := b.buf
	b.buf = b.spare[:0]
	b.spare = nil
	b.wmu.Lock()
	b.mu.Unlock()
	_, err := b.out.Write(full)
	b.wmu.Unlock()
	b.mu.Lock()
	if b.spare == nil {
		b.spare = full[:0]
	}
	b.mu.Unlock()
	return err
}

// Close stops the timer and writes what is left. Lines written after Close
// still reach out, one write each.
func (b *LogBuffer) Close() error {
	b.once.Do(func() {
		close(b.stop)
		<-b.done
	})
	// The size drops to zero before the last flush: a line a goroutine
	// writes meanwhile then goes through at once instead of into a buffer
	// that nothing flushes any more.
	b.mu.Lock()
	b.size = 0
	b.mu.Unlock()
	return b.Flush()
}

// FlushingHandler flushes a LogBuffer after every record of level Warn or
// above, so warnings and errors are on the stream at once while access
// lines are batched.
type FlushingHandler struct {
	slog.Handler
	buf *LogBuffer
}

// NewFlushingHandler wraps h, which writes into buf.
func NewFlushingHandler(h slog.Handler, buf *LogBuffer) *FlushingHandler {
	return &FlushingHandler{Handler: h, buf: buf}
}

// Handle logs r and flushes for Warn and above.
func (h *FlushingHandler) Handle(ctx context.Context, r slog.Record) error {
	err := h.Handler.Handle(ctx, r)
	if r.Level >= slog.LevelWarn {
		if ferr := h.buf.Flush(); err == nil {
			err = ferr
		}
	}
	return err
}

// WithAttrs keeps the flushing behaviour on the derived handler.
func (h *FlushingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &FlushingHandler{Handler: h.Handler.WithAttrs(attrs), buf: h.buf}
}

// WithGroup keeps the flushing behaviour on the derived handler.
func (h *FlushingHandler) WithGroup(name string) slog.Handler {
	return &FlushingHandler{Handler: h.Handler.WithGroup(name), buf: h.buf}
}

// Unwrap returns the wrapped handler, so the access log still finds the
// platform's TextHandler and its fast path beneath.
func (h *FlushingHandler) Unwrap() slog.Handler { return h.Handler }
