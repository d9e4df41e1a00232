package background

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"partnerapi/internal/testenv"
)

// errRefused is what a query on a stopped PostgreSQL ends with, as the driver
// wraps it (sqldb.Unavailable looks at the types alone).
var errRefused = fmt.Errorf("failed to connect to `user=root database=test`: %w", syscall.ECONNREFUSED)

// A run of outcomes of one worker gives one line per change, not one per
// run: a WARN when the database first cannot be used, an INFO when a run
// works again, an ERROR per distinct other error (a repeat only after
// repeatEvery), and counts every failure by reason.
func TestWorkerReportsChangesOnce(t *testing.T) {
	other := errors.New("scan banking_payment_webhooks: bad row")
	for _, tc := range []struct {
		name     string
		runs     []error
		step     time.Duration // between runs
		want     []string      // level and message of each line, in order
		unavail  float64
		others   float64
		failing  bool
		succeded bool // last success set
	}{
		{name: "all well", runs: []error{nil, nil, nil}, succeded: true},
		{name: "an outage of ten runs", runs: []error{nil, errRefused, errRefused, errRefused, errRefused, errRefused, errRefused, errRefused, errRefused, errRefused, errRefused, nil, nil},
			want:    []string{"WARN w: database unavailable", "INFO w: works again"},
			unavail: 10, succeded: true},
		{name: "an outage still going", runs: []error{errRefused, errRefused, errRefused},
			want: []string{"WARN w: database unavailable"}, unavail: 3, failing: true},
		{name: "two outages", runs: []error{errRefused, nil, errRefused, errRefused, nil},
			want:    []string{"WARN w: database unavailable", "INFO w: works again", "WARN w: database unavailable", "INFO w: works again"},
			unavail: 3, succeded: true},
		{name: "a bug at every tick", runs: []error{other, other, other, other}, step: time.Second,
			want: []string{"ERROR w: failed"}, others: 4, failing: true},
		{name: "a bug for two minutes", runs: []error{other, other, other, other, other}, step: 40 * time.Second,
			want: []string{"ERROR w: failed", "ERROR w: failed", "ERROR w: failed"}, others: 5, failing: true},
		{name: "an outage then a bug then well", runs: []error{errRefused, errRefused, other, nil},
			want:    []string{"WARN w: database unavailable", "ERROR w: failed", "INFO w: works again"},
			unavail: 2, others: 1, succeded: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs := &testenv.LogBuffer{}
			reg := prometheus.NewRegistry()
			m := NewMetrics(reg)
			w := m.Worker("w", slog.New(slog.NewTextHandler(logs, nil)))
			now := time.Date(2026, 11, 29, 13, 0, 0, 0, time.UTC)
			w.now = func() time.Time { return now }
			for _, err := range tc.runs {
				w.Report(err)
				now = now.Add(max(tc.step, time.Second))
			}
			var got []string
			for l := range strings.Lines(logs.String()) {
				got = append(got, between(l, "level=", " ")+" "+between(l, `msg="`, `"`))
			}
			if len(got) != len(tc.want) {
				t.Fatalf("log lines %q, want %q:\n%s", got, tc.want, logs)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tc.want[i]) {
					t.Fatalf("line %d is %q, want %q:\n%s", i, got[i], tc.want[i], logs)
				}
			}
			if v := value(m.errors.WithLabelValues("w", ReasonUnavailable)); v != tc.unavail {
				t.Errorf("unavailable errors %v, want %v", v, tc.unavail)
			}
			if v := value(m.errors.WithLabelValues("w", ReasonError)); v != tc.others {
				t.Errorf("other errors %v, want %v", v, tc.others)
			}
			if w.Failing() != tc.failing {
				t.Errorf("failing %v, want %v", w.Failing(), tc.failing)
			}
			if v := value(m.lastSuccess.WithLabelValues("w")); (v > 0) != tc.succeded {
				t.Errorf("last success %v, want set %v", v, tc.succeded)
			}
			if strings.Contains(logs.String(), "level=WARN") && !strings.Contains(logs.String(), "connection refused") {
				t.Errorf("the WARN line does not carry the driver's error:\n%s", logs)
			}
		})
	}
}

// value is a counter's or a gauge's current value.
func value(c prometheus.Metric) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		panic(err)
	}
	if m.Counter != nil {
		return m.Counter.GetValue()
	}
	return m.Gauge.GetValue()
}

func between(s, from, to string) string {
	_, s, _ = strings.Cut(s, from)
	s, _, _ = strings.Cut(s, to)
	return s
}

// Two modules registering workers on one registry share the series instead
// of panicking, and each worker's series exist from the start (an alert on
// a missing series would not fire).
func TestMetricsSharedRegistry(t *testing.T) {
	reg := prometheus.NewRegistry()
	a, b := NewMetrics(reg), NewMetrics(reg)
	a.Worker("one", nil)
	b.Worker("two", nil).Report(errRefused)
	families, err := reg.Gather()
	n := 0
	for _, f := range families {
		n += len(f.GetMetric())
	}
	if err != nil || n != 6 {
		t.Fatalf("series %d %v, want 6 (2 workers × 2 reasons + 2 timestamps)", n, err)
	}
	if v := value(a.errors.WithLabelValues("two", ReasonUnavailable)); v != 1 {
		t.Fatalf("the second registration's count is not in the first's series: %v", v)
	}
}

// A run that hangs (a database that took the connection and never answers)
// ends at its bound, and is reported as the database not answering: one
// WARN line and database_unavailable counts, not an ERROR per run, whatever
// the driver made of the cancellation, and one INFO line when a run works
// again. A run that ends with ctx (the worker stopping) is not given the
// bound's error, so that its caller can leave it out of the report.
func TestBoundedRunOfAHungDatabase(t *testing.T) {
	const bound = 50 * time.Millisecond
	// The run notes the deadline it was given and when it began, so the
	// bound is checked on the context rather than on the wall time the
	// run took, which a stalled machine stretches.
	var deadline, entered time.Time
	var hasDeadline bool
	hang := func(ctx context.Context) error {
		entered = time.Now()
		deadline, hasDeadline = ctx.Deadline()
		<-ctx.Done()
		return errors.New("interrupted (9)") // SQLite's answer to a cancelled statement
	}
	logs := &testenv.LogBuffer{}
	m := NewMetrics(prometheus.NewRegistry())
	w := m.Worker("w", slog.New(slog.NewTextHandler(logs, nil)))
	for range 3 {
		start := time.Now()
		err := Bounded(context.Background(), bound, hang)
		if err == nil || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("a hung run: %v, want a deadline error after %s", err, bound)
		}
		// Bounded set the deadline between start and the run's first
		// line, so it is bound after a moment within them.
		if !hasDeadline || deadline.Before(start.Add(bound)) || deadline.After(entered.Add(bound)) {
			t.Fatalf("a hung run's deadline: %v (set %v), want %s after a moment between %v and %v",
				deadline, hasDeadline, bound, start, entered)
		}
		w.Report(err)
	}
	w.Report(Bounded(context.Background(), bound, func(context.Context) error { return nil }))
	var got []string
	for l := range strings.Lines(logs.String()) {
		got = append(got, between(l, "level=", " ")+" "+between(l, `msg="`, `"`))
	}
	if len(got) != 2 || !strings.HasPrefix(got[0], "WARN w: database unavailable") || !strings.HasPrefix(got[1], "INFO w: works again") ||
		!strings.Contains(logs.String(), "no answer within 50ms") {
		t.Fatalf("log lines %q, want one WARN naming the bound and one INFO:\n%s", got, logs)
	}
	if u, o := value(m.errors.WithLabelValues("w", ReasonUnavailable)), value(m.errors.WithLabelValues("w", ReasonError)); u != 3 || o != 0 {
		t.Fatalf("database_unavailable %v, error %v; want 3 and 0", u, o)
	}
	stopping, stop := context.WithCancel(context.Background())
	go func() { time.Sleep(bound / 5); stop() }()
	if err := Bounded(stopping, time.Hour, hang); err == nil || errors.Is(err, context.DeadlineExceeded) || stopping.Err() == nil {
		t.Fatalf("a run stopped by its caller: %v, want its own error", err)
	}
}
