package sqldb_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// forever is a commit delay no test may sit out: a committer that waits
// when it should not hangs the test instead of passing it slowly.
const forever = time.Hour

// waitPending yields until g holds n queued items and expects callers
// more (a Submit queues its item before it stops being expected).
func waitPending(t *testing.T, g *sqldb.GroupCommit[kv], n, expected int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); g.Pending() != n || g.Expected() != expected; {
		if time.Now().After(deadline) {
			t.Fatalf("%d items queued, %d expected; want %d and %d", g.Pending(), g.Expected(), n, expected)
		}
		runtime.Gosched()
	}
}

func submitAsync(g *sqldb.GroupCommit[kv], ctx context.Context, key string) chan error {
	done := make(chan error, 1)
	go func() { done <- g.Submit(ctx, kv{key: key, value: "v"}) }()
	return done
}

func mustDone(t *testing.T, done ...chan error) {
	t.Helper()
	for _, d := range done {
		if err := <-d; err != nil {
			t.Fatal(err)
		}
	}
}

// Expected callers that arrive while the committer waits share its batch:
// the committer holds the first item until the last expected one is queued.
func TestCommitDelayBatchesExpected(t *testing.T) {
	storetest.Each(t, createKV, func(t *testing.T, db *sqldb.DB) {
		g := sqldb.NewGroupCommit(db, 0, func(it kv) string { return it.key }, writeKV).WithCommitDelay(forever)
		before := db.GroupCommitStats()
		var ctxs []context.Context
		for range 5 {
			ctx, release := g.Expect(context.Background())
			defer release.Release()
			ctxs = append(ctxs, ctx)
		}
		if g.Expected() != 5 {
			t.Fatalf("expected %d, want 5", g.Expected())
		}
		var done []chan error
		for i, ctx := range ctxs[:4] {
			done = append(done, submitAsync(g, ctx, fmt.Sprint("k", i)))
			waitPending(t, g, i+1, 5-(i+1))
		}
		// Four queued, one still expected: nothing is taken yet.
		if st := db.GroupCommitStats(); st.Batches != before.Batches || g.Expected() != 1 {
			t.Fatalf("committed before the expected item arrived: %+v → %+v, expected %d", before, st, g.Expected())
		}
		done = append(done, submitAsync(g, ctxs[4], "k4"))
		mustDone(t, done...)
		if st := db.GroupCommitStats(); st.Batches-before.Batches != 1 || st.Items-before.Items != 5 {
			t.Fatalf("want one batch of 5: %+v → %+v", before, st)
		}
		if g.Expected() != 0 || countKV(t, db, "") != 5 {
			t.Fatalf("expected %d, rows %d", g.Expected(), countKV(t, db, ""))
		}
	})
}

// A lone caller, announced or not, is committed at once: nothing else is
// expected, so the committer has nothing to wait for.
func TestCommitDelayLoneSubmit(t *testing.T) {
	storetest.Each(t, createKV, func(t *testing.T, db *sqldb.DB) {
		g := sqldb.NewGroupCommit(db, 0, nil, writeKV).WithCommitDelay(forever)
		before := db.GroupCommitStats()
		if err := g.Submit(context.Background(), kv{key: "plain", value: "v"}); err != nil {
			t.Fatal(err)
		}
		ctx, release := g.Expect(context.Background())
		if err := g.Submit(ctx, kv{key: "announced", value: "v"}); err != nil {
			t.Fatal(err)
		}
		release.Release() // after its submit: a no-op
		release.Release()
		if st := db.GroupCommitStats(); st.Batches-before.Batches != 2 || st.Items-before.Items != 2 || g.Expected() != 0 {
			t.Fatalf("want two batches of one: %+v → %+v, expected %d", before, st, g.Expected())
		}
	})
}

// An expected caller that gives up without submitting (a refused request)
// releases the batch waiting for it.
func TestCommitDelayReleased(t *testing.T) {
	db := storetest.SQLite(t)
	if err := createKV(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	g := sqldb.NewGroupCommit(db, 0, nil, writeKV).WithCommitDelay(forever)
	before := db.GroupCommitStats()
	ctxA, releaseA := g.Expect(context.Background())
	defer releaseA.Release()
	_, releaseB := g.Expect(context.Background())
	done := submitAsync(g, ctxA, "a")
	waitPending(t, g, 1, 1)
	releaseB.Release()
	mustDone(t, done)
	if st := db.GroupCommitStats(); st.Batches-before.Batches != 1 || st.Items-before.Items != 1 || g.Expected() != 0 {
		t.Fatalf("want one batch of one: %+v → %+v, expected %d", before, st, g.Expected())
	}
}

// The wait is bounded: a caller expected but never arriving holds a batch
// back only for the delay. A full batch does not wait at all.
func TestCommitDelayBounded(t *testing.T) {
	storetest.Each(t, createKV, func(t *testing.T, db *sqldb.DB) {
		g := sqldb.NewGroupCommit(db, 0, nil, writeKV).WithCommitDelay(time.Millisecond)
		before := db.GroupCommitStats()
		_, release := g.Expect(context.Background())
		if err := g.Submit(context.Background(), kv{key: "bounded", value: "v"}); err != nil {
			t.Fatal(err)
		}
		if st := db.GroupCommitStats(); st.Batches-before.Batches != 1 || g.Expected() != 1 {
			t.Fatalf("%+v → %+v, expected %d", before, st, g.Expected())
		}
		release.Release()

		full := sqldb.NewGroupCommit(db, 2, nil, writeKV).WithCommitters(1).WithCommitDelay(forever)
		before = db.GroupCommitStats()
		ctxA, releaseA := full.Expect(context.Background())
		defer releaseA.Release()
		ctxB, releaseB := full.Expect(context.Background())
		defer releaseB.Release()
		_, releaseC := full.Expect(context.Background())
		defer releaseC.Release()
		a := submitAsync(full, ctxA, "full-a")
		waitPending(t, full, 1, 2)
		mustDone(t, a, submitAsync(full, ctxB, "full-b"))
		if st := db.GroupCommitStats(); st.Batches-before.Batches != 1 || st.Items-before.Items != 2 || full.Expected() != 1 {
			t.Fatalf("want one full batch of 2 while one more is expected: %+v → %+v, expected %d", before, st, full.Expected())
		}
	})
}

// Without a delay Expect costs nothing and counts nothing.
func TestCommitDelayOff(t *testing.T) {
	db := storetest.SQLite(t)
	g := sqldb.NewGroupCommit(db, 0, nil, writeKV)
	ctx := context.Background()
	got, release := g.Expect(ctx)
	defer release.Release()
	if got != ctx || g.Expected() != 0 {
		t.Fatalf("Expect without a delay changed the context or counted: %d", g.Expected())
	}
}

// writeKVStatement writes a batch as one multi-row INSERT on the pool; a
// "boom" value (NULL) fails the whole statement.
func writeKVStatement(ctx context.Context, db *sql.DB, items []kv) ([]error, error) {
	var vals []string
	var args []any
	for i, it := range items {
		var v any = it.value
		if it.value == "boom" {
			v = nil
		}
		vals = append(vals, fmt.Sprintf("($%d, $%d)", 2*i+1, 2*i+2))
		args = append(args, it.key, v)
	}
	rows, err := db.QueryContext(ctx, `INSERT INTO kv (k, v) VALUES `+strings.Join(vals, ", ")+` ON CONFLICT (k) DO NOTHING RETURNING k`, args...)
	if err != nil {
		return nil, err
	}
	written := map[string]bool{}
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			rows.Close()
			return nil, err
		}
		written[k] = true
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	out := make([]error, len(items))
	for i, it := range items {
		if !written[it.key] {
			out[i] = errTaken
		}
	}
	return out, rows.Err()
}

// A single-statement writer commits a batch without an explicit
// transaction; a batch whose statement fails leaves nothing behind, and
// its items are retried one by one as with a transaction.
func TestGroupCommitSingleStatement(t *testing.T) {
	storetest.Each(t, createKV, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		never := func(context.Context, *sql.Tx, []kv) ([]error, error) {
			t.Error("the transaction writer ran")
			return nil, errors.New("unused")
		}
		g := sqldb.NewGroupCommit(db, 0, func(it kv) string { return it.key }, never).
			WithSingleStatement(writeKVStatement).WithCommitDelay(forever)
		before := db.GroupCommitStats()
		var ctxs []context.Context
		for range 4 {
			ctx, release := g.Expect(ctx)
			defer release.Release()
			ctxs = append(ctxs, ctx)
		}
		var done []chan error
		for i, v := range []string{"ok", "boom", "ok", "ok"} {
			d := make(chan error, 1)
			go func() { d <- g.Submit(ctxs[i], kv{key: fmt.Sprint("s", i), value: v}) }()
			done = append(done, d)
		}
		for i, d := range done {
			if err := <-d; (err != nil) != (i == 1) {
				t.Fatalf("item %d: %v", i, err)
			}
		}
		if st := db.GroupCommitStats(); st.Retried-before.Retried != 1 || st.Batches-before.Batches != 1+4 {
			t.Fatalf("want one failed batch of 4 and 4 retries: %+v → %+v", before, st)
		}
		if err := g.Submit(ctx, kv{key: "s0", value: "again"}); !errors.Is(err, errTaken) {
			t.Fatalf("taken key: %v", err)
		}
		if n := countKV(t, db, "WHERE k LIKE 's%'"); n != 3 {
			t.Fatalf("%d rows, want 3", n)
		}
	})
}
