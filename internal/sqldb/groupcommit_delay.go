package sqldb

import (
	"context"
	"sync/atomic"
	"time"
)

// The commit delay is GroupCommit's form of PostgreSQL's commit_delay with
// commit_siblings, or MySQL's binlog_group_commit_sync_delay: before a
// committer begins a transaction it may wait a short, bounded time for
// callers that are already on their way. A transaction's fsync costs the
// same for one item as for fifty, and under load most of a committer's time
// per item is that fixed cost, so a batch that waited 100 µs for the requests
// still being validated carries more items per fsync. Unlike a plain delay it
// waits only for callers known to be coming: a request announces itself with
// Expect when it starts (before its decoding, validation and signature checks)
// and stops being expected when it submits or gives up. With nothing
// expected — a lone caller, or every caller already queued — the committer
// starts at once, so low concurrency pays nothing.

// expectKey is the context key under which Expect stores a caller's
// expectation; g tells the group commits of one process apart. It holds
// only a pointer, so making it an interface allocates nothing.
type expectKey[T any] struct{ g *GroupCommit[T] }

// expectation is one announced caller and the context that carries it (one
// allocation for both); settled turns true once, when it submits or is
// released, whichever comes first.
type expectation[T any] struct {
	context.Context
	g       *GroupCommit[T]
	settled atomic.Bool
}

// Value is the parent's, but for g's key, which names the expectation.
func (e *expectation[T]) Value(key any) any {
	if k, ok := key.(expectKey[T]); ok && k.g == e.g {
		return e
	}
	return e.Context.Value(key)
}

// WithCommitDelay makes a committer wait up to d for expected callers (see
// Expect) before it begins a transaction; 0 (the default) never waits. Call
// it before the first Submit.
func (g *GroupCommit[T]) WithCommitDelay(d time.Duration) *GroupCommit[T] {
	g.delay = max(d, 0)
	return g
}

// CommitDelay is the bound set by WithCommitDelay.
func (g *GroupCommit[T]) CommitDelay() time.Duration { return g.delay }

// Expectation is what Expect returns to end an announcement: Release.
type Expectation interface {
	// Release stops expecting the caller; it is idempotent.
	Release()
}

// noExpectation is Expect's answer without a commit delay.
type noExpectation struct{}

func (noExpectation) Release() {}

// Release settles the expectation, if its caller has not submitted.
func (e *expectation[T]) Release() { e.g.settle(e) }

// Expect announces a caller that is about to Submit: until it submits with
// the returned context (or one derived from it) or calls Release, a
// committer about to begin a transaction may wait for it, at most the commit
// delay. Release is idempotent and must be called (defer it) on every path,
// since a caller that fails before submitting would otherwise hold every
// batch back for the whole delay. Without a commit delay Expect does nothing.
// The expectation is the context itself, so an announcement costs one
// allocation (a release closure was a second one per create).
func (g *GroupCommit[T]) Expect(ctx context.Context) (context.Context, Expectation) {
	if g.delay <= 0 {
		return ctx, noExpectation{}
	}
	e := &expectation[T]{Context: ctx, g: g}
	g.expected.Add(1)
	return e, e
}

// Expected is the number of callers announced by Expect that have neither
// submitted nor been released.
func (g *GroupCommit[T]) Expected() int { return int(g.expected.Load()) }

// arrived settles the expectation ctx carries, if any: its item is queued.
// A waiting committer is woken only when that changes its mind — nothing
// is expected any more, or the queue holds a full batch — not on every
// arrival, which under load would switch to it once per item for nothing.
func (g *GroupCommit[T]) arrived(ctx context.Context, full bool) {
	if g.delay <= 0 {
		return
	}
	if e, ok := ctx.Value(expectKey[T]{g}).(*expectation[T]); ok {
		g.settle(e)
	}
	if full {
		g.wake()
	}
}

// settle stops expecting e, once, and wakes a waiting committer when e was
// the last one expected.
func (g *GroupCommit[T]) settle(e *expectation[T]) {
	if e.settled.CompareAndSwap(false, true) && g.expected.Add(-1) == 0 {
		g.wake()
	}
}

// wake tells a waiting committer to look again; a committer that is not
// waiting finds the token later and merely looks once more.
func (g *GroupCommit[T]) wake() {
	select {
	case g.kick <- struct{}{}:
	default:
	}
}

// shouldWait reports (g.mu held) whether a committer with a batch to take
// should first wait for expected callers: a delay is set, something is
// queued, the batch is not full yet and a caller not yet queued is expected.
func (g *GroupCommit[T]) shouldWait() bool {
	return g.delay > 0 && len(g.queue) > 0 && len(g.queue) < g.maxBatch && g.expected.Load() > 0
}

// awaitExpected waits (g.mu not held) until no caller is expected any more,
// the queue holds a full batch, or the delay has passed. A committer that
// stops waiting because the condition holds passes the wake-up on, so
// another committer waiting beside it (PostgreSQL) does not sleep out its
// whole delay.
func (g *GroupCommit[T]) awaitExpected() {
	t := time.NewTimer(g.delay)
	defer t.Stop()
	for {
		select {
		case <-g.kick:
		case <-t.C:
			return
		}
		g.mu.Lock()
		wait := g.shouldWait()
		g.mu.Unlock()
		if !wait {
			g.wake()
			return
		}
	}
}
