package sqlite

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"partnerapi/internal/background"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/testenv"
)

func failures(t *testing.T, reg *prometheus.Registry, worker, reason string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "partnerapi_background_errors_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if labels(m)["worker"] == worker && labels(m)["reason"] == reason {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

func labels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// A checkpoint that cannot get a reader connection (every one held by a
// read that does not end) fails at its bound instead of waiting for good:
// the failure is counted, reported to the checkpointer's worker as the
// database not answering (one WARN line, database_unavailable), and the
// checkpointer, and so Close, stops within the bound. Once the readers are
// back, checkpoints work again and the worker says so. Before the bound,
// the checkpoint's QueryRow had no context and waited for a connection
// for as long as the pool was held.
func TestCheckpointerBoundedWhenReadersHang(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.W.ExecContext(ctx, "CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('x')"); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	var logs testenv.LogBuffer
	worker := background.NewMetrics(reg).Worker("sqlite-checkpoint", slog.New(slog.NewTextHandler(&logs, nil)))
	// OpenFile's checkpointer takes the reader pool too; this one, with a
	// bound a test can wait for, is the one under test.
	db.BeforeClose()
	const bound = 300 * time.Millisecond
	c := &checkpointer{r: db.R, stats: db.Checkpoints, bound: bound}
	report := worker.Report
	c.report.Store(&report)
	stop := c.start()

	release := testenv.HoldReaders(t, db.R, 8)
	before := db.Checkpoints.Failures.Load()
	deadline := time.Now().Add(10 * time.Second)
	for failures(t, reg, "sqlite-checkpoint", background.ReasonUnavailable) == 0 {
		if time.Now().After(deadline) {
			release()
			t.Fatal("no checkpoint failed at its bound while every reader connection was held")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if db.Checkpoints.Failures.Load() == before {
		t.Fatal("the failed checkpoints are not counted")
	}
	if !strings.Contains(logs.String(), "database unavailable") {
		t.Fatalf("no WARN line for the stalled checkpoint:\n%s", logs.String())
	}
	// A checkpoint of its own, on the same reader pool, notes the deadline
	// it was given and when it began: the bound is checked on its context
	// rather than on the wall time it took, which a stalled machine
	// stretches. (The running checkpointer's ticks would race on a hook
	// set on it now.)
	var given, entered time.Time
	var hasDeadline bool
	probe := &checkpointer{r: db.R, stats: &sqldb.CheckpointStats{}, bound: bound, began: func(ctx context.Context) {
		entered = time.Now()
		given, hasDeadline = ctx.Deadline()
	}}
	start := time.Now()
	_, err = probe.checkpoint("PASSIVE")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a checkpoint with the readers held: %v, want a deadline error after %s", err, bound)
	}
	// The deadline was set between start and the checkpoint's first line,
	// so it is bound after a moment within them.
	if !hasDeadline || given.Before(start.Add(bound)) || given.After(entered.Add(bound)) {
		t.Fatalf("a checkpoint's deadline: %v (set %v), want %s after a moment between %v and %v",
			given, hasDeadline, bound, start, entered)
	}

	release()
	deadline = time.Now().Add(10 * time.Second)
	for worker.Failing() {
		if time.Now().After(deadline) {
			t.Fatal("the checkpointer did not work again once the readers were back")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(logs.String(), "works again") {
		t.Fatalf("no line saying the checkpointer works again:\n%s", logs.String())
	}

	// Stopping while the readers are held again ends within the bound of
	// the last checkpoint rather than when a reader comes back.
	release = testenv.HoldReaders(t, db.R, 8)
	defer release()
	stopped := make(chan struct{})
	go func() { stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(bound + 5*time.Second):
		t.Fatal("stopping the checkpointer waited for a reader connection")
	}
}
