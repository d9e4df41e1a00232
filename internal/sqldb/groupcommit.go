package sqldb

import (
	"context"
	"database/sql"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// WriteBatch writes items inside tx and returns one outcome per item: nil
// when the item was written, or the item's own refusal (a duplicate key, say)
// which does not stop the others from committing. Its error return fails the
// whole transaction instead; GroupCommit then retries every item on its own.
type WriteBatch[T any] func(ctx context.Context, tx *sql.Tx, items []T) ([]error, error)

// WriteStatement is a WriteBatch that writes all items in one statement, on
// the writer pool outside an explicit transaction (WithSingleStatement).
type WriteStatement[T any] func(ctx context.Context, db *sql.DB, items []T) ([]error, error)

// GroupCommit turns many concurrent small writes into few transactions. An
// fsync costs the same for one row as for a hundred, so callers that arrive
// while a transaction is being committed queue up and are written together by
// the next one; each caller is answered only after the transaction holding its
// item has committed, so an acknowledged write is as durable as with one
// transaction per item. By default there is no waiting to fill a batch: a
// lone caller is committed at once, and batches grow only as far as the load
// makes them. WithCommitDelay adds a bounded wait for callers that announced
// themselves with Expect and have not submitted yet (groupcommit_delay.go).
//
// On SQLite one batch is in flight at a time, which is all its single
// writer allows. PostgreSQL commits several transactions at once and merges
// their WAL flushes itself, so there up to postgresCommitters batches run
// side by side. Items with the same key are never in flight together (not in
// one batch, not in two concurrent ones): the later one waits for the next
// batch, so a store can tell which of two equal keys won, and concurrent
// batches never wait on each other's row locks.
type GroupCommit[T any] struct {
	db       *DB
	maxBatch int
	key      func(T) string
	write    WriteBatch[T]
	single   WriteStatement[T] // replaces write when set
	timeout  time.Duration

	mu       sync.Mutex
	queue    []*groupItem[T]
	active   int             // committer goroutines running
	parallel int             // most committers at once
	inFlight map[string]bool // keys of the batches being written

	// The commit delay (groupcommit_delay.go): how long a committer waits
	// for expected items, how many are expected (announced by Expect, not
	// yet queued nor abandoned), and the channel that wakes a waiting
	// committer when one of them arrives or gives up.
	delay    time.Duration
	expected atomic.Int64
	kick     chan struct{}

	// items recycles the queue entries of answered callers, each with its
	// answer channel: a create paid two allocations for them.
	items sync.Pool
}

// postgresCommitters is how many batches run at once on PostgreSQL. Two, not
// more: every commit costs the server a fixed amount of CPU (executor set-up
// of the batch statement, a WAL flush) on cores it may share with us, and
// each committer more splits the waiting documents into more, smaller
// batches. In the banking bench on two cores, 4 committers made batches of
// 1.5 / 9 documents at 8 / 64 connections and cost the server ~400 / ~80 µs
// per document; 2 made 2.5 / 17 at ~190 / ~65 µs and answered 1.5× the
// creates at 8 connections. Two still overlap one batch's flush with the
// next one's statement, which one committer cannot.
const postgresCommitters = 2

type groupItem[T any] struct {
	ctx  context.Context
	item T
	done chan error
}

// DefaultMaxBatch bounds a batch so that its statements stay well inside
// both engines' limits on bind parameters (SQLite 32 766, PostgreSQL 65 535).
const DefaultMaxBatch = 256

// NewGroupCommit makes a committer writing items with write. key (may be
// nil) names an item's unique key; maxBatch ≤ 0 means DefaultMaxBatch.
func NewGroupCommit[T any](db *DB, maxBatch int, key func(T) string, write WriteBatch[T]) *GroupCommit[T] {
	if maxBatch <= 0 {
		maxBatch = DefaultMaxBatch
	}
	parallel := 1
	if db.Dialect == Postgres {
		parallel = postgresCommitters
	}
	return &GroupCommit[T]{db: db, maxBatch: maxBatch, key: key, write: write, timeout: 30 * time.Second,
		parallel: parallel, inFlight: map[string]bool{}, kick: make(chan struct{}, 1)}
}

// WithCommitters sets how many batches may be in flight at once (n ≥ 1);
// call it before the first Submit. SQLite allows only one writer, so more
// than one there only queues in the driver.
func (g *GroupCommit[T]) WithCommitters(n int) *GroupCommit[T] {
	g.parallel = max(n, 1)
	return g
}

// WithSingleStatement makes the committer write each batch with single, a
// writer whose whole batch is one statement, without BEGIN and COMMIT
// around it. On PostgreSQL a lone statement is its own transaction, as
// atomic and, with synchronous_commit on, as durable as an explicit one
// (its commit is flushed before the statement's answer completes), and it
// saves the two round trips, each costing CPU on both sides. Call it before
// the first Submit.
func (g *GroupCommit[T]) WithSingleStatement(single WriteStatement[T]) *GroupCommit[T] {
	g.single = single
	return g
}

// GroupStats counts what the group commits of one DB have done:
// transactions run (batches), items answered and batches that failed as a
// whole and were retried item by item. Benchmarks print the mean batch.
type GroupStats struct{ Batches, Items, Retried uint64 }

type groupCounters struct{ batches, items, retried atomic.Uint64 }

// GroupCommitStats returns the counters of every GroupCommit on db so far.
func (db *DB) GroupCommitStats() GroupStats {
	c := &db.groups
	return GroupStats{Batches: c.batches.Load(), Items: c.items.Load(), Retried: c.retried.Load()}
}

// Pending is the number of items queued and not yet taken into a batch.
func (g *GroupCommit[T]) Pending() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.queue)
}

// Submit queues item and returns its outcome once the transaction holding it
// has committed (nil) or refused it. When ctx ends first Submit returns
// ctx.Err() at once; an item already taken into a batch may still be written,
// as any write whose answer was lost may be.
func (g *GroupCommit[T]) Submit(ctx context.Context, item T) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	it, _ := g.items.Get().(*groupItem[T])
	if it == nil {
		it = &groupItem[T]{done: make(chan error, 1)}
	}
	it.ctx, it.item = ctx, item
	g.mu.Lock()
	g.queue = append(g.queue, it)
	full := len(g.queue) >= g.maxBatch
	if g.active < g.parallel {
		g.active++
		go g.run()
	}
	g.mu.Unlock()
	// Queued: the item is no longer one a delayed committer waits for.
	g.arrived(ctx, full)
	select {
	case err := <-it.done:
		// Answered: the committer sends on done last and keeps nothing of
		// it, and done is empty again, so the entry can serve another call.
		// An entry abandoned below is never reused, since its answer may
		// still come.
		var zero T
		it.ctx, it.item = nil, zero
		g.items.Put(it)
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// run commits batches until no batch can be taken, then exits, so an idle
// GroupCommit holds no goroutine and needs no Close. Items left waiting for
// a key in flight are taken by the committer of that key's batch, which
// loops once more after answering it.
func (g *GroupCommit[T]) run() {
	var done []string
	last := 0
	for {
		if last > 1 {
			g.gather()
		}
		g.mu.Lock()
		for _, k := range done {
			delete(g.inFlight, k)
		}
		if g.shouldWait() {
			g.mu.Unlock()
			g.awaitExpected()
			g.mu.Lock()
		}
		batch, keys := g.take()
		if len(batch) == 0 {
			g.active--
			g.mu.Unlock()
			return
		}
		g.mu.Unlock()
		g.commit(batch)
		done, last = keys, len(batch)
	}
}

// gatherYields bounds how many times gather yields before a batch.
const gatherYields = 4

// gather lets the goroutines that are ready to run go first, before the
// committer takes its next batch, as long as that makes more items queue:
// under CPU saturation the requests that will submit next are runnable
// goroutines, and a batch that waits one round of the run queue for them
// carries several times the items per transaction (on SQLite the commit's
// WAL header, fsync and statement set-up are paid per batch). Yielding costs
// nothing when nothing else is runnable, so a lone caller, or a machine with
// idle cores, commits at once; and the caller only calls it after a batch of
// more than one item, a sign of concurrent load. A yield that brings no new
// item ends the gathering, so the most it can add to a batch's wait is one
// round of the run queue, which a committer woken from its fsync waits
// anyway. In the banking bench on two cores this made SQLite batches at 256
// connections 8 → 30 documents and the create ratio 0.27 → 0.39.
func (g *GroupCommit[T]) gather() {
	for range gatherYields {
		g.mu.Lock()
		n := len(g.queue)
		g.mu.Unlock()
		if n >= g.maxBatch {
			return
		}
		runtime.Gosched()
		g.mu.Lock()
		grew := len(g.queue) > n
		g.mu.Unlock()
		if !grew {
			return
		}
	}
}

// take removes the next batch from the queue (g.mu held): up to maxBatch
// items in arrival order, at most one per key and none whose key is in
// flight in another batch; callers that already gave up are answered and
// dropped. It returns the batch's keys, now marked in flight.
func (g *GroupCommit[T]) take() ([]*groupItem[T], []string) {
	var batch []*groupItem[T]
	var keys []string
	rest := g.queue[:0]
	for _, it := range g.queue {
		if err := it.ctx.Err(); err != nil {
			it.done <- err
			continue
		}
		if len(batch) == g.maxBatch {
			rest = append(rest, it)
			continue
		}
		if g.key != nil {
			k := g.key(it.item)
			if g.inFlight[k] {
				rest = append(rest, it)
				continue
			}
			g.inFlight[k] = true
			keys = append(keys, k)
		}
		batch = append(batch, it)
	}
	clear(g.queue[len(rest):])
	g.queue = rest
	return batch, keys
}

// commit writes batch in one transaction and answers every item after the
// commit returned. If the transaction fails as a whole, each item is tried
// again in a transaction of its own, so one item that breaks a statement
// cannot fail the unrelated items that happened to share its batch.
func (g *GroupCommit[T]) commit(batch []*groupItem[T]) {
	items := make([]T, len(batch))
	for i, it := range batch {
		items[i] = it.item
	}
	outcomes, err := g.tx(items)
	g.db.groups.batches.Add(1)
	if err == nil {
		g.answer(batch, outcomes)
		return
	}
	if len(batch) == 1 {
		g.answer(batch, []error{err})
		return
	}
	g.db.groups.retried.Add(1)
	for i, it := range batch {
		outcome, err := g.tx(items[i : i+1])
		g.db.groups.batches.Add(1)
		if err != nil {
			outcome = []error{err}
		}
		g.answer([]*groupItem[T]{it}, outcome)
	}
}

// tx runs write in one transaction under the committer's own deadline (one
// caller's cancelled request must not abort the others' batch). A panic in
// write becomes an error, since no caller's stack is there to receive it.
// On SQLite the deadline bounds only the wait for the writer connection
// (txUninterrupted): the batch's statements run without it, because the
// driver watches a cancellable context with a goroutine and a progress
// handler for every statement, eight or so per batch, and nothing in a
// batch waits on anything a deadline could end that busy_timeout does not
// already bound.
func (g *GroupCommit[T]) tx(items []T) (outcomes []error, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), g.timeout)
	defer cancel()
	defer func() {
		if p := recover(); p != nil {
			outcomes, err = nil, fmt.Errorf("group commit: panic: %v", p)
		}
	}()
	if g.single != nil {
		outcomes, err = g.single(ctx, g.db.W, items)
		if err == nil && len(outcomes) != len(items) {
			err = fmt.Errorf("group commit: %d outcomes for %d items", len(outcomes), len(items))
		}
		if err != nil {
			return nil, err
		}
		return outcomes, nil
	}
	run, wctx := g.db.Tx, ctx
	if g.db.Dialect == SQLite {
		run, wctx = g.db.txUninterrupted, context.WithoutCancel(ctx)
	}
	err = run(ctx, func(tx *sql.Tx) error {
		var werr error
		outcomes, werr = g.write(wctx, tx, items)
		if werr == nil && len(outcomes) != len(items) {
			werr = fmt.Errorf("group commit: %d outcomes for %d items", len(outcomes), len(items))
		}
		return werr
	})
	if err != nil {
		return nil, err
	}
	return outcomes, nil
}

// answer counts the batch's items, then answers them: a caller that reads
// GroupCommitStats after its Submit returned sees its item counted.
func (g *GroupCommit[T]) answer(batch []*groupItem[T], outcomes []error) {
	g.db.groups.items.Add(uint64(len(batch)))
	for i, it := range batch {
		it.done <- outcomes[i]
	}
}
