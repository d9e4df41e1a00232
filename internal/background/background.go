// Package background reports how the server's background workers fare (the
// banking webhook outbox, the identity purger): a log line when a worker
// starts failing and one when it works again, rather than a line per run or
// none at all, and Prometheus series an operator can alert on.
package background

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"partnerapi/internal/sqldb"
)

// Reasons of partnerapi_background_errors_total.
const (
	ReasonUnavailable = "database_unavailable" // sqldb.Unavailable, or a run its bound ended (Bounded): the database cannot be used for now
	ReasonError       = "error"                // anything else: a bug, a broken row, a configuration fault
)

// Metrics are the workers' series on /metrics: failed runs by worker and
// reason, and when each worker last ran without an error.
type Metrics struct {
	errors      *prometheus.CounterVec
	lastSuccess *prometheus.GaugeVec
}

// NewMetrics creates the workers' collectors and registers them with reg
// (nil: registered nowhere). Each API module that runs workers calls it
// with the process's one registry, so a second call finds the series the
// first registered and shares them instead of failing.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "partnerapi_background_errors_total",
			Help: "Failed runs of a background worker, by worker and reason: database_unavailable (the database could not be used for the moment, or did not answer within the run's bound; the worker retries by itself) or error.",
		}, []string{"worker", "reason"}),
		lastSuccess: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "partnerapi_background_last_success_timestamp_seconds",
			Help: "Unix time of a background worker's last run that ended without an error.",
		}, []string{"worker"}),
	}
	if reg == nil {
		return m
	}
	m.errors = register(reg, m.errors)
	m.lastSuccess = register(reg, m.lastSuccess)
	return m
}

// register registers c with reg, or returns the collector of the same name
// registered before.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
		panic(err)
	}
	return c
}

// repeatEvery is how often an error other than the database being
// unavailable is logged again while a worker keeps failing with the same
// message: each different message is logged at once, but a fault that
// recurs at every tick (every 2 s for the webhook outbox) would otherwise
// fill the log with copies of one line.
const repeatEvery = time.Minute

// Worker is the health of one background worker: its runs report their
// outcome, and it logs and counts the changes. It is safe for concurrent
// use.
type Worker struct {
	name string
	log  *slog.Logger
	m    *Metrics
	now  func() time.Time

	mu          sync.Mutex
	failingFrom time.Time // first failed run of the current streak; zero while working
	failures    int       // failed runs in the current streak
	unavailable bool      // the streak's last failure was the database being unavailable
	lastLogged  string    // the message of the last other error logged, and when
	lastLogAt   time.Time
}

// Worker returns the health of the worker name, which logs to log (nil:
// slog.Default()). m may be nil: no series then. Its last-success series
// starts at zero, so that a worker that never once succeeded shows as such.
func (m *Metrics) Worker(name string, log *slog.Logger) *Worker {
	if log == nil {
		log = slog.Default()
	}
	w := &Worker{name: name, log: log, m: m, now: time.Now}
	if m != nil {
		m.lastSuccess.WithLabelValues(name)
		m.errors.WithLabelValues(name, ReasonUnavailable)
		m.errors.WithLabelValues(name, ReasonError)
	}
	return w
}

// Report records the outcome of one run: nil, a run that worked; else its
// error. The first run failing because the database cannot be used is one
// WARN line saying so (the driver's error names the database's user and
// name, never the URL's password); further such runs are counted, not
// logged, until a run works again, which is one INFO line with how long the
// worker failed. Other errors are ERROR lines, each different message at
// once and a repeated one at most every repeatEvery. The caller leaves out
// the errors of its own stopping (a cancelled context).
func (w *Worker) Report(err error) {
	if w == nil {
		return
	}
	now := w.now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if err == nil {
		if w.m != nil {
			w.m.lastSuccess.WithLabelValues(w.name).Set(float64(now.UnixNano()) / 1e9)
		}
		if !w.failingFrom.IsZero() {
			w.log.Info(w.name+": works again", "worker", w.name, "failed_for", now.Sub(w.failingFrom).Round(time.Millisecond).String(),
				"failed_runs", w.failures)
		}
		w.failingFrom, w.failures, w.unavailable, w.lastLogged = time.Time{}, 0, false, ""
		return
	}
	if w.failingFrom.IsZero() {
		w.failingFrom = now
	}
	w.failures++
	if unavailable(err) {
		if w.m != nil {
			w.m.errors.WithLabelValues(w.name, ReasonUnavailable).Inc()
		}
		if !w.unavailable {
			w.log.Warn(w.name+": database unavailable; the worker retries by itself and says when it works again",
				"worker", w.name, "err", err)
		}
		w.unavailable = true
		return
	}
	if w.m != nil {
		w.m.errors.WithLabelValues(w.name, ReasonError).Inc()
	}
	w.unavailable = false
	if msg := err.Error(); msg != w.lastLogged || now.Sub(w.lastLogAt) >= repeatEvery {
		w.log.Error(w.name+": failed", "worker", w.name, "err", err, "failed_runs", w.failures)
		w.lastLogged, w.lastLogAt = msg, now
	}
}

// unavailable reports whether err is the database not being usable for
// now: an error sqldb.Unavailable knows, or a run that its bound ended
// (context.DeadlineExceeded, which sqldb.Unavailable leaves out, since a
// request's own deadline is no outage). A worker's runs wait on nothing
// else that could hang: a database that accepts the connection and never
// answers shows as runs that end at their bound, and is reported as the
// outage it is, once, with the recovery, rather than as an ERROR per run.
func unavailable(err error) bool {
	return sqldb.Unavailable(err) || errors.Is(err, context.DeadlineExceeded)
}

// Bounded runs one run of a worker under a context that ends bound after
// it starts (or with ctx), so that a database that stops answering fails
// the run, to be reported and tried again, instead of holding the worker
// for good. The error of a run the bound ended wraps
// context.DeadlineExceeded whatever the driver made of the cancellation
// (SQLite answers "interrupted"), so Report counts it as the database not
// answering; when ctx itself ended, the error is returned as it is.
func Bounded(ctx context.Context, bound time.Duration, run func(context.Context) error) error {
	rctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	err := run(rctx)
	if err != nil && ctx.Err() == nil && rctx.Err() != nil && !errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("no answer within %s: %w: %w", bound, context.DeadlineExceeded, err)
	}
	return err
}

// Log is the logger the worker's lines go to, for the lines of its own a
// worker writes beside them.
func (w *Worker) Log() *slog.Logger { return w.log }

// Failing reports whether the worker's last run failed.
func (w *Worker) Failing() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return !w.failingFrom.IsZero()
}
