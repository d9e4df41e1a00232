package web

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a log sink the handler's goroutines and the test share.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) lines(msg string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, l := range strings.Split(b.buf.String(), "\n") {
		if strings.Contains(l, `msg="`+msg+`"`) {
			out = append(out, l)
		}
	}
	return out
}

// TestHealthProbesDuringAnOutageLogOnce drives a listener's /healthz as a
// load balancer does during an outage: many failed probes are one WARN
// line, not one each, and the recovery is one INFO line.
func TestHealthProbesDuringAnOutageLogOnce(t *testing.T) {
	var sink lockedBuffer
	var mu sync.Mutex
	down := true
	h := API{Name: "test", Handler: NewMux("test", nil, nil), Errors: func(w http.ResponseWriter, r *http.Request, status int, err error) { w.WriteHeader(status) },
		Health: func(context.Context) error {
			mu.Lock()
			defer mu.Unlock()
			if down {
				return errors.New("database is unavailable")
			}
			return nil
		}}.Build(slog.New(slog.NewTextHandler(&sink, nil)), nil)
	probe := func(want int) {
		t.Helper()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
		if rec.Code != want {
			t.Fatalf("/healthz %d, want %d", rec.Code, want)
		}
	}
	for range 200 {
		probe(503)
	}
	if got := sink.lines("health check failed"); len(got) != 1 || !strings.Contains(got[0], "database is unavailable") {
		t.Fatalf("200 failed probes logged %d failure lines, want 1 naming the error: %q", len(got), got)
	}
	mu.Lock()
	down = false
	mu.Unlock()
	for range 5 {
		probe(200)
	}
	if got := sink.lines("health check passes again"); len(got) != 1 || !strings.Contains(got[0], "failed_probes_unlogged=199") {
		t.Fatalf("recovery logged %q, want one line counting the 199 probes not logged", got)
	}
	mu.Lock()
	down = true
	mu.Unlock()
	probe(503)
	if got := sink.lines("health check failed"); len(got) != 2 {
		t.Fatalf("a new outage logged %d failure lines in all, want a second one at once", len(got))
	}
}

// TestHealthLogRepeatsWhileFailing holds that an outage that lasts is
// logged again once a minute, with what failed since, so an operator
// reading the tail of the log sees that it is still going on.
func TestHealthLogRepeatsWhileFailing(t *testing.T) {
	var sink lockedBuffer
	h := newHealthLog(slog.New(slog.NewTextHandler(&sink, nil)), "test")
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	h.now = func() time.Time { return now }
	err := errors.New("database is unavailable")
	for i := range 31 { // a probe every 2 s for a minute
		if i > 0 {
			now = now.Add(2 * time.Second)
		}
		h.failed(err)
	}
	if got := sink.lines("health check still failing"); len(got) != 1 ||
		!strings.Contains(got[0], "failed_probes=30") || !strings.Contains(got[0], "failing_for=1m0s") {
		t.Fatalf("a minute of failed probes logged %q, want one repeat counting 30 probes over 1m0s", got)
	}
	now = now.Add(30 * time.Second)
	h.failed(err)
	if got := sink.lines("health check still failing"); len(got) != 1 {
		t.Fatalf("half a minute later logged %d repeats, want still 1", len(got))
	}
	h.passed()
	if got := sink.lines("health check passes again"); len(got) != 1 || !strings.Contains(got[0], "failed_for=1m30s") {
		t.Fatalf("recovery logged %q, want the outage's length 1m30s", got)
	}
}
