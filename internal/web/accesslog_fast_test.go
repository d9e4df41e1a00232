package web

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestAccessLineMatchesSlog pins that the fast access line is byte for
// byte what slog's TextHandler writes for the record withAccessLog builds,
// across times (zones, whole seconds), durations and values.
func TestAccessLineMatchesSlog(t *testing.T) {
	msk := time.FixedZone("MSK", 3*3600)
	lines := []accessLine{
		{end: time.Date(2026, 11, 23, 18, 10, 39, 123456789, time.UTC), api: "banking", method: "POST", path: "/fintech/api/v1/payments",
			status: 201, bytes: 812, duration: 1234567 * time.Nanosecond, id: "0b9d5c1e-7f3a-4b2c-9d8e-1f2a3b4c5d6e", remote: "127.0.0.1:40000"},
		{end: time.Date(2026, 1, 2, 3, 4, 5, 0, msk), api: "smarthome", method: "GET", path: "/v1.0/user/devices",
			status: 404, bytes: 0, duration: 0, id: "rid-1", remote: "[::1]:5555"},
		{end: time.Date(2026, 6, 30, 23, 59, 59, 999999999, time.Local), api: "assistant", method: "DELETE", path: "/x/<y>&z",
			status: 500, bytes: 1 << 40, duration: 90 * time.Minute, id: "a-b_c.d~e", remote: "192.0.2.1:1"},
		{end: time.Date(2026, 11, 30, 2, 40, 0, 5e8, time.UTC), api: "assistant", method: "POST", path: "/api/v1/chat/completions",
			status: 200, bytes: 77, duration: time.Second, id: "r", remote: "10.0.0.1:2",
			extra: [MaxLogHeaders]logField{{"session_id", "s-1"}, {"client_id", "C9a"}}, nExtra: 2},
	}
	for _, l := range lines {
		var want bytes.Buffer
		h := slog.New(slog.NewTextHandler(&want, nil)).With(slog.String("api", l.api)).Handler()
		rec := slog.NewRecord(l.end, slog.LevelInfo, "request", 0)
		rec.AddAttrs(slog.String("method", l.method), slog.String("path", l.path), slog.Int("status", l.status),
			slog.Int64("bytes", l.bytes), slog.Duration("duration", l.duration), slog.String("request_id", l.id),
			slog.String("remote", l.remote))
		for _, f := range l.extra[:l.nExtra] {
			rec.AddAttrs(slog.String(f.key, f.value))
		}
		if err := h.Handle(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
		if got := appendAccessLine(nil, &l); !bytes.Equal(got, want.Bytes()) {
			t.Errorf("fast line\n%s\nslog line\n%s", got, want.Bytes())
		}
	}
}

// TestAccessLogQuotedFallsBack checks that a value slog quotes is left to
// slog (the line quotes the path) and that other records still log.
func TestAccessLogQuotedFallsBack(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(NewTextHandler(&buf, nil))
	h := withAccessLog("bank", log, nil, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	req := httptest.NewRequest("GET", "/a%20b", nil)
	h.ServeHTTP(httptest.NewRecorder(), req)
	log.Warn("other", "k", "v w")
	out := buf.String()
	if !strings.Contains(out, ` path="/a b" status=200 bytes=0 `) || !strings.Contains(out, `level=WARN msg=other k="v w"`) {
		t.Fatalf("log:\n%s", out)
	}
	if _, ok := NewTextHandler(&buf, &slog.HandlerOptions{AddSource: true}).(*TextHandler); ok {
		t.Fatal("AddSource must take slog's handler")
	}
}

// TestAccessLogHeaders checks that the API's LogHeaders reach the line
// under their keys, absent ones add nothing, a value slog must quote takes
// slog's path (so a client cannot forge an attribute with a space and an
// equals sign), a long value is cut, and other headers stay out.
func TestAccessLogHeaders(t *testing.T) {
	headers := []LogHeader{{Header: "X-Session-ID", Key: "session_id"}, {Header: "X-Client-ID", Key: "client_id"}}
	cases := []struct {
		name      string
		set       map[string]string
		want, not []string
	}{
		{"both", map[string]string{"X-Session-ID": "sess-42", "X-Client-ID": "c1", "Authorization": "Bearer sekret"},
			[]string{" remote=192.0.2.1:1234 session_id=sess-42 client_id=c1\n"}, []string{"sekret"}},
		{"absent", map[string]string{"X-Client-ID": "c1"},
			[]string{" remote=192.0.2.1:1234 client_id=c1\n"}, []string{"session_id"}},
		{"quoted", map[string]string{"X-Session-ID": "a status=500"},
			[]string{` session_id="a status=500"`}, nil},
		{"long", map[string]string{"X-Session-ID": strings.Repeat("x", 300)},
			[]string{" session_id=" + strings.Repeat("x", maxLogHeaderValue) + "\n"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			log := slog.New(NewTextHandler(&buf, nil))
			h := withAccessLog("assistant", log, nil, headers, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
			req := httptest.NewRequest("POST", "/api/v1/chat/completions", nil)
			for k, v := range c.set {
				req.Header.Set(k, v)
			}
			h.ServeHTTP(httptest.NewRecorder(), req)
			out := buf.String()
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("line lacks %q:\n%s", w, out)
				}
			}
			for _, n := range c.not {
				if strings.Contains(out, n) {
					t.Errorf("line carries %q:\n%s", n, out)
				}
			}
		})
	}
}
