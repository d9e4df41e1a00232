package web

import (
	"log/slog"
	"sync"
	"time"
)

// healthLogEvery is how often a health check that keeps failing is logged
// again. A load balancer or an orchestrator probes /healthz every few
// seconds on every listener, so a line per failed probe would bury the one
// line that says what broke under hundreds that repeat it.
const healthLogEvery = time.Minute

// healthLog turns the probes of one listener into log lines an operator can
// read during an outage: the first failure at once with its error, then one
// line a minute while it lasts (with how many probes failed since the last
// line and the newest error), and one line when a probe passes again, with
// how long the check failed.
type healthLog struct {
	log *slog.Logger
	api string
	now func() time.Time // time.Now; tests move it

	mu         sync.Mutex
	since      time.Time // first failure of the current streak; zero while healthy
	lastLogged time.Time
	unlogged   int // failed probes since the last line
}

func newHealthLog(log *slog.Logger, api string) *healthLog {
	return &healthLog{log: log, api: api, now: time.Now}
}

func (h *healthLog) failed(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	if h.since.IsZero() {
		h.since, h.lastLogged, h.unlogged = now, now, 0
		h.log.Warn("health check failed", "api", h.api, "err", err)
		return
	}
	h.unlogged++
	if now.Sub(h.lastLogged) < healthLogEvery {
		return
	}
	h.log.Warn("health check still failing", "api", h.api, "err", err,
		"failing_for", now.Sub(h.since).Round(time.Second).String(), "failed_probes", h.unlogged)
	h.lastLogged, h.unlogged = now, 0
}

func (h *healthLog) passed() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.since.IsZero() {
		return
	}
	now := h.now()
	h.log.Info("health check passes again", "api", h.api,
		"failed_for", now.Sub(h.since).Round(time.Millisecond).String(), "failed_probes_unlogged", h.unlogged)
	h.since, h.unlogged = time.Time{}, 0
}
