package web

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	mathrand "math/rand/v2"
	"net/http"
	"partnerapi/internal/jsonmsg"
	"runtime/debug"
	"time"
	"unsafe"
)

type ctxKey int

const (
	requestIDKey ctxKey = iota
	// idContextKey finds the platform's own context under the contexts
	// inner layers derive from it (OwnRequestID).
	idContextKey
)

// RequestID returns the request id the platform assigned to the request.
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey).(string)
	return id
}

// NewUUID returns a random (version 4) UUID string from the system's
// cryptographic generator.
func NewUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return formatUUID(&b)
}

// formatUUID stamps version 4 and the RFC 9562 variant into b and encodes
// it by hand into one allocation.
func formatUUID(b *[16]byte) string {
	var out [36]byte
	encodeUUID(&out, b)
	return string(out[:])
}

// encodeUUID stamps version 4 and the RFC 9562 variant into b and writes
// its text form into out.
func encodeUUID(out *[36]byte, b *[16]byte) {
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	hex.Encode(out[0:8], b[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], b[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], b[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], b[8:10])
	out[23] = '-'
	hex.Encode(out[24:36], b[10:16])
}

// validRequestID accepts what clients send as X-Request-Id (UUIDs and other
// tokens) but refuses ids that could break logs or headers.
func validRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, c := range id {
		if c < 0x21 || c > 0x7e {
			return false
		}
	}
	return true
}

// withRequestID honours an incoming X-Request-Id, or makes one, and always
// echoes it in the response. The context it makes also carries the
// listener's trusted proxies, so ClientIP resolves a request's client the
// way its listener was told to.
func withRequestID(proxies TrustedProxies, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// One allocation holds what every request needs from the platform:
		// the status-recording writer the inner layers share, the context
		// carrying the id, the header value and a made id's bytes.
		st := &requestState{sw: statusWriter{ResponseWriter: w}}
		id, made := r.Header.Get("X-Request-Id"), false
		if !validRequestID(id) {
			id, made = st.newRequestID(), true
		}
		// The request's one wall-clock read: the access log's start, the
		// write deadline and the route's latency all take this instant
		// instead of reading the clock again (startOf), each read being
		// two vDSO clock calls.
		st.ctx = idContext{Context: r.Context(), id: id, made: made, proxies: proxies, start: time.Now()}
		st.hdr[0] = id
		w.Header()["X-Request-Id"] = st.hdr[:]
		next.ServeHTTP(&st.sw, r.WithContext(&st.ctx))
	})
}

type requestState struct {
	sw    statusWriter
	ctx   idContext
	hdr   [1]string
	idBuf [36]byte
}

// newRequestID returns a version 4 UUID for a request that came without an
// X-Request-Id. A request id correlates log lines and is no secret, so it
// comes from the runtime's fast per-thread generator instead of a system
// call per request; it is formatted into st's own buffer, so the id costs
// no allocation of its own. The buffer is written once, before the
// string is made, and the string keeps st alive as long as it is used.
func (st *requestState) newRequestID() string {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], mathrand.Uint64())
	binary.LittleEndian.PutUint64(b[8:], mathrand.Uint64())
	encodeUUID(&st.idBuf, &b)
	return unsafe.String(&st.idBuf[0], len(st.idBuf))
}

// idContext is context.WithValue(parent, requestIDKey, id) without its own
// allocation.
type idContext struct {
	context.Context
	id      string
	made    bool           // the platform made id (the request came without one)
	proxies TrustedProxies // the listener's, for ClientIP
	start   time.Time      // when the platform took the request (requestStart)
}

// requestStart returns when the platform took the request whose context
// ctx is (or derives from), with its monotonic reading; the zero time
// outside the platform's requests.
func requestStart(ctx context.Context) time.Time {
	if c, ok := ctx.(*idContext); ok {
		return c.start
	}
	if c, ok := ctx.Value(idContextKey).(*idContext); ok {
		return c.start
	}
	return time.Time{}
}

// startOf is requestStart, or the clock now for a request the platform's
// request-id layer did not see (a layer tested on its own).
func startOf(ctx context.Context) time.Time {
	if t := requestStart(ctx); !t.IsZero() {
		return t
	}
	return time.Now()
}

// OwnRequestID returns the request's id and true when the platform made it
// for this request (a fresh version 4 UUID, unique to the request), false
// when the client sent its own X-Request-Id, which it may reuse.
func OwnRequestID(ctx context.Context) (string, bool) {
	if c, ok := ctx.(*idContext); ok {
		return c.id, c.made
	}
	// An inner layer derived its own context (the authenticated principal,
	// a deadline): the platform's is found by key, so an error answered
	// there still carries the id of the access log's line.
	if c, ok := ctx.Value(idContextKey).(*idContext); ok {
		return c.id, c.made
	}
	return RequestID(ctx), false
}

// requestIDOf is RequestID without boxing the id into an interface when
// ctx is the platform's own context (as the access log sees it).
func requestIDOf(ctx context.Context) string {
	id, _ := OwnRequestID(ctx)
	return id
}

func (c *idContext) Value(key any) any {
	switch key {
	case requestIDKey:
		return c.id
	case idContextKey:
		return c
	}
	return c.Context.Value(key)
}

// withAccessLog writes one structured line per request. It logs the path
// without the query string and no header but the API's LogHeaders (chosen
// identifiers), so tokens and secrets that clients put there stay out of
// the logs. When the logger drops info lines
// it costs nothing.
//
// Its remote is the connection's peer with its port, or, for a request a
// trusted proxy forwarded, the client's address as ClientIP resolves it
// (no port: a proxy's header carries none): the address the banking login
// throttle counts by, not the proxy's, which every request would share.
//
// The line is handed to the logger's handler directly: the api attribute
// is bound once (handlers format it ahead, and it comes first either way),
// the record's time is the end time the duration is taken from, and no
// caller's program counter is looked up (slog.Logger walks the stack for
// it on every call, and the source would be this function anyway). With
// the platform's TextHandler the line skips the record altogether.
func withAccessLog(api string, log *slog.Logger, proxies TrustedProxies, headers []LogHeader, next http.Handler) http.Handler {
	if len(headers) > MaxLogHeaders {
		panic("web: more than MaxLogHeaders access-log headers")
	}
	fast := textHandlerOf(log.Handler()) // accesslog.go
	h := log.With(slog.String("api", api)).Handler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !h.Enabled(r.Context(), slog.LevelInfo) {
			next.ServeHTTP(w, r)
			return
		}
		start := startOf(r.Context())
		sw := wrap(w)
		next.ServeHTTP(sw, r)
		end := time.Now()
		remote := r.RemoteAddr
		if len(proxies) > 0 {
			if ip, forwarded := proxies.Client(r.RemoteAddr, r.Header); forwarded {
				remote = ip
			}
		}
		// The method and the path are the client's, of any length (up to
		// the 1 MiB of a request's head) and any bytes: the line quotes
		// their first characters, as valid UTF-8.
		method, path := jsonmsg.Echo(r.Method), jsonmsg.EchoAtMost(r.URL.Path, maxLogPath)
		line := accessLine{end: end, api: api, method: method, path: path,
			status: sw.Status(), bytes: sw.bytes, duration: end.Sub(start), id: requestIDOf(r.Context()), remote: remote}
		for _, lh := range headers {
			if v := r.Header.Get(lh.Header); v != "" {
				line.extra[line.nExtra] = logField{key: lh.Key, value: v[:min(len(v), maxLogHeaderValue)]}
				line.nExtra++
			}
		}
		if fast != nil && fast.writeAccess(&line) {
			return
		}
		rec := slog.NewRecord(end, slog.LevelInfo, "request", 0)
		rec.AddAttrs(
			slog.String("method", method),
			slog.String("path", path),
			slog.Int("status", sw.Status()),
			slog.Int64("bytes", sw.bytes),
			slog.Duration("duration", end.Sub(start)),
			slog.String("request_id", requestIDOf(r.Context())),
			slog.String("remote", remote),
		)
		for _, f := range line.extra[:line.nExtra] {
			rec.AddAttrs(slog.String(f.key, f.value))
		}
		_ = h.Handle(r.Context(), rec)
	})
}

// textHandlerOf finds the platform's TextHandler in h or beneath the
// handlers h wraps (FlushingHandler), nil when there is none.
func textHandlerOf(h slog.Handler) *TextHandler {
	for {
		switch x := h.(type) {
		case *TextHandler:
			return x
		case interface{ Unwrap() slog.Handler }:
			h = x.Unwrap()
		default:
			return nil
		}
	}
}

// withRecovery turns a panic into a 500 in the API's envelope (when nothing
// was sent yet) and a log line with the stack, instead of a dropped
// connection. http.ErrAbortHandler keeps its meaning: abort silently.
func withRecovery(log *slog.Logger, errs ErrorWriter, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := wrap(w)
		defer func() {
			p := recover()
			if p == nil {
				return
			}
			if p == http.ErrAbortHandler {
				panic(p)
			}
			log.Error("panic serving request", "request_id", RequestID(r.Context()), "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			if !sw.Written() {
				errs(sw, r, http.StatusInternalServerError, ErrPanic)
			}
		}()
		next.ServeHTTP(sw, r)
	})
}

// withBodyLimit caps request bodies at defaultCap, or at paths' own cap for
// the exact paths it names. A declared length over the cap is
// refused at once in the API's envelope; a chunked body that grows past it
// fails on read with *http.MaxBytesError, which handlers report through
// IsBodyTooLarge.
func withBodyLimit(defaultCap int64, paths map[string]int64, errs ErrorWriter, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		limit := defaultCap
		if len(paths) > 0 {
			if l, ok := paths[r.URL.Path]; ok {
				limit = l
			}
		}
		if r.ContentLength > limit {
			w.Header().Set("Connection", "close")
			errs(w, r, http.StatusRequestEntityTooLarge, ErrBodyTooLarge)
			return
		}
		// A request without a body (every GET) has nothing to cap.
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = http.MaxBytesReader(w, r.Body, limit)
		}
		next.ServeHTTP(w, r)
	})
}

// IsBodyTooLarge reports whether err came from reading past the body limit.
func IsBodyTooLarge(err error) bool {
	var mbe *http.MaxBytesError
	return errors.As(err, &mbe)
}

// withWriteDeadline bounds how long an ordinary response may take to write.
// Streaming handlers lift it with LiftWriteDeadline, and handlers that
// compute for long before answering defer it with DeferWriteDeadline, so
// the server has no global WriteTimeout that would cut long SSE streams or
// answers that took long to make.
func withWriteDeadline(d time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := statusWriterOf(w)
		if sw != nil {
			sw.writeTimeout = d
		}
		_ = setWriteDeadline(w, startOf(r.Context()).Add(d))
		next.ServeHTTP(w, r)
		// A handler that deferred its deadline and then wrote nothing
		// leaves net/http to send the empty answer: bound that write too.
		if sw != nil {
			sw.startDeferredDeadline()
		}
	})
}

// LiftWriteDeadline removes the write deadline of a streaming response.
func LiftWriteDeadline(w http.ResponseWriter) {
	if sw := statusWriterOf(w); sw != nil {
		sw.deferDeadline = false
	}
	_ = setWriteDeadline(w, time.Time{})
}

// DeferWriteDeadline is for a handler that has read its request and will
// compute for long (a whole generation) before it writes anything: the
// write deadline, which runs from the request's start, would otherwise
// expire meanwhile and drop the finished answer. The deadline is lifted
// now and starts again, the API's WriteTimeout long, when the response
// starts, so a client that stops reading is still cut off. A client that
// goes away meanwhile cancels the request's context, as ever. Reading the
// request stays bounded by the server's read timeouts.
func DeferWriteDeadline(w http.ResponseWriter) {
	sw := statusWriterOf(w)
	if sw == nil || sw.writeTimeout == 0 || sw.Written() {
		// Without the platform's writer the deadline could not be set
		// again when the answer starts, so it stays as it is.
		return
	}
	sw.deferDeadline = true
	_ = setWriteDeadline(w, time.Time{})
}

// statusWriterOf finds the platform's statusWriter in w or beneath the
// writers w wraps, nil when there is none.
func statusWriterOf(w http.ResponseWriter) *statusWriter {
	for {
		switch x := w.(type) {
		case *statusWriter:
			return x
		case interface{ Unwrap() http.ResponseWriter }:
			w = x.Unwrap()
		default:
			return nil
		}
	}
}

// setWriteDeadline is http.ResponseController.SetWriteDeadline without
// allocating a controller per request: it unwraps w until a writer offers
// SetWriteDeadline.
func setWriteDeadline(w http.ResponseWriter, t time.Time) error {
	for {
		switch x := w.(type) {
		case interface{ SetWriteDeadline(time.Time) error }:
			return x.SetWriteDeadline(t)
		case interface{ Unwrap() http.ResponseWriter }:
			w = x.Unwrap()
		default:
			return http.ErrNotSupported
		}
	}
}
