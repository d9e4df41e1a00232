package web

import (
	"bufio"
	"net"
	"net/http"
	"time"
)

// statusWriter remembers the status and size of a response for logs and
// metrics. It keeps Flush and Hijack working (SSE needs Flush) and exposes
// Unwrap so http.ResponseController reaches the connection.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
	// writeTimeout is the API's bound on writing an ordinary response, set
	// by withWriteDeadline. When deferDeadline is set, the handler computes
	// for long before it answers (DeferWriteDeadline): the deadline was
	// lifted, and it starts again, writeTimeout long, when the response
	// starts.
	writeTimeout  time.Duration
	deferDeadline bool
}

func wrap(w http.ResponseWriter) *statusWriter {
	if sw, ok := w.(*statusWriter); ok {
		return sw
	}
	return &statusWriter{ResponseWriter: w}
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.startDeferredDeadline()
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.startDeferredDeadline()
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// startDeferredDeadline gives a response whose handler deferred its write
// deadline the whole writeTimeout from now, when it starts: a client that
// stops reading the answer is still cut off.
func (w *statusWriter) startDeferredDeadline() {
	if w.deferDeadline {
		w.deferDeadline = false
		_ = setWriteDeadline(w.ResponseWriter, time.Now().Add(w.writeTimeout))
	}
}

// Status is the status written so far (200 if only a body was written, 0 if
// nothing was).
func (w *statusWriter) Status() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}

// Written reports whether anything has been sent to the client.
func (w *statusWriter) Written() bool { return w.status != 0 }

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
