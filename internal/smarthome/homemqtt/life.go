package homemqtt

import (
	"context"
	"sync"
	"time"
)

// The gate's lifetime: what it does by itself (re-asks on timers, the
// waits for the broker's acknowledgements, the retries of held messages,
// the pruning of agents) and what an administrator sends through it
// (deliver) each count as work in progress, which Close waits for, and
// none starts once Close was called. Close thus returns only when the
// gate's goroutines have done their work (the last one may still be
// returning from leave, which woke Close) and nothing more is published: a re-ask
// due a few seconds later used to fire after Close, and a command sent as
// the gate closed went to a client being disconnected.

// ErrClosed is a command, or another message an administrator sends (Gate
// Send), refused because the gate was closed (the service is stopping):
// nothing was sent. It is the gate being unavailable, as ErrBrokerDown is
// (smarthome.ErrGateDown, the admin API's 503).
var ErrClosed error = &brokerError{msg: "the MQTT gate is closed (the service is stopping): nothing was sent to the agent; send it again"}

// life is the gate's work in progress: busy counts what runs or is due on
// a timer (timers), idle is closed once closed and nothing is busy; ctx
// is cancelled by Close, ending reads of the store in progress.
type life struct {
	sync.Mutex
	closed bool
	busy   int
	idle   chan struct{}
	timers map[*time.Timer]struct{}
	ctx    context.Context
	cancel context.CancelFunc
}

// startLife readies the gate's lifetime; Start calls it first.
func (g *Gate) startLife() {
	g.life.idle = make(chan struct{})
	g.life.timers = map[*time.Timer]struct{}{}
	g.life.ctx, g.life.cancel = context.WithCancel(context.Background())
}

// enter counts one piece of work in progress, false once Close was
// called: then the work must not start. Each true is matched by a leave.
func (g *Gate) enter() bool {
	g.life.Lock()
	defer g.life.Unlock()
	if g.life.closed {
		return false
	}
	g.life.busy++
	return true
}

// leave ends a piece of work enter counted.
func (g *Gate) leave() {
	g.life.Lock()
	defer g.life.Unlock()
	g.leaveLocked()
}

func (g *Gate) leaveLocked() {
	g.life.busy--
	if g.life.closed && g.life.busy == 0 {
		close(g.life.idle)
	}
}

// spawn runs f on a goroutine of its own that Close waits for, unless the
// gate is closed.
func (g *Gate) spawn(f func()) {
	if !g.enter() {
		return
	}
	go func() {
		defer g.leave()
		f()
	}()
}

// afterFunc runs f after d unless Close comes first, which stops the timer
// or, when it has fired, waits for f to return. f runs even when Close
// came meanwhile, and checks (closing, enter) before it acts.
func (g *Gate) afterFunc(d time.Duration, f func()) {
	g.life.Lock()
	defer g.life.Unlock()
	if g.life.closed {
		return
	}
	g.life.busy++
	var t *time.Timer
	t = time.AfterFunc(d, func() {
		// The lock orders this after the assignment of t below.
		g.life.Lock()
		delete(g.life.timers, t)
		g.life.Unlock()
		defer g.leave()
		f()
	})
	g.life.timers[t] = struct{}{}
}

// endLife refuses new work, stops the timers not yet fired and cancels
// the reads of the store in progress; the channel it returns is closed
// once the work in progress has ended.
func (g *Gate) endLife() <-chan struct{} {
	g.life.Lock()
	defer g.life.Unlock()
	if g.life.closed {
		return g.life.idle
	}
	g.life.closed = true
	g.life.cancel()
	for t := range g.life.timers {
		if t.Stop() {
			g.life.busy--
		}
	}
	g.life.timers = nil
	if g.life.busy == 0 {
		close(g.life.idle)
	}
	return g.life.idle
}
