package web

import (
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"
)

// TextHandler is slog's TextHandler with a fast path for the access log:
// withAccessLog formats its line straight into a pooled buffer, byte for
// byte what the TextHandler writes for the same record (a test compares
// them), instead of building a slog.Record whose seven attributes spill
// out of the record and are walked and quoted one by one. Every other
// record, and an access line with a value that would need quoting, goes
// through slog. Both paths write through one locked writer, so lines never
// interleave.
type TextHandler struct {
	slog.Handler // the *slog.TextHandler writing to out
	out          *lockedWriter
}

// NewTextHandler returns a text handler for w with opts. Options that
// change what a line holds (ReplaceAttr, AddSource) get slog's own handler
// without the fast path.
func NewTextHandler(w io.Writer, opts *slog.HandlerOptions) slog.Handler {
	if opts != nil && (opts.ReplaceAttr != nil || opts.AddSource) {
		return slog.NewTextHandler(w, opts)
	}
	lw := &lockedWriter{w: w}
	return &TextHandler{Handler: slog.NewTextHandler(lw, opts), out: lw}
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// accessLine is what the access log records about one request.
type accessLine struct {
	end                           time.Time
	api, method, path, id, remote string
	status                        int
	bytes                         int64
	duration                      time.Duration
	extra                         [MaxLogHeaders]logField // API.LogHeaders present on the request
	nExtra                        int
}

// logField is one attribute an access line adds after its own.
type logField struct{ key, value string }

var lineBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

// writeAccess writes l as the TextHandler would write the record
// withAccessLog builds; false (nothing written) when a value needs
// quoting, which slog's path does.
func (h *TextHandler) writeAccess(l *accessLine) bool {
	for _, s := range [...]string{l.api, l.method, l.path, l.id, l.remote} {
		if !plainLogValue(s) {
			return false
		}
	}
	for _, f := range l.extra[:l.nExtra] {
		if !plainLogValue(f.value) {
			return false
		}
	}
	bp := lineBuffers.Get().(*[]byte)
	b := appendAccessLine((*bp)[:0], l)
	_, _ = h.out.Write(b)
	if cap(b) <= 4<<10 {
		*bp = b
		lineBuffers.Put(bp)
	}
	return true
}

// appendAccessLine appends the line of l in slog's text format: the
// built-in time, level and message, then the api bound by With and the
// record's attributes in order.
func appendAccessLine(b []byte, l *accessLine) []byte {
	b = append(b, "time="...)
	b = appendRFC3339Millis(b, l.end.Round(0))
	b = append(b, " level=INFO msg=request api="...)
	b = append(b, l.api...)
	b = append(b, " method="...)
	b = append(b, l.method...)
	b = append(b, " path="...)
	b = append(b, l.path...)
	b = append(b, " status="...)
	b = strconv.AppendInt(b, int64(l.status), 10)
	b = append(b, " bytes="...)
	b = strconv.AppendInt(b, l.bytes, 10)
	b = append(b, " duration="...)
	b = append(b, l.duration.String()...)
	b = append(b, " request_id="...)
	b = append(b, l.id...)
	b = append(b, " remote="...)
	b = append(b, l.remote...)
	for _, f := range l.extra[:l.nExtra] {
		b = append(b, ' ')
		b = append(b, f.key...)
		b = append(b, '=')
		b = append(b, f.value...)
	}
	return append(b, '\n')
}

// appendRFC3339Millis is log/slog's time format: RFC 3339 with exactly
// three decimals of the second.
func appendRFC3339Millis(b []byte, t time.Time) []byte {
	const prefixLen = len("2006-01-02T15:04:05.000")
	n := len(b)
	t = t.Truncate(time.Millisecond).Add(time.Millisecond / 10)
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b[:n+prefixLen], b[n+prefixLen+1:]...) // drop the 4th digit
}

// plainLogValue reports whether slog's text handler writes s unquoted
// for certain: non-empty printable ASCII without space, '=', '"' or '\'.
// (slog leaves some other strings unquoted too; those take its path.)
func plainLogValue(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || c == '=' || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
