package sqldb_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// kv is the item of the test committer: a row of table kv; value "boom"
// breaks the whole statement (a NOT NULL violation), "panic" panics, and an
// item with hold signals started and blocks the committer until hold is
// closed.
type kv struct {
	key, value    string
	started, hold chan struct{}
}

var errTaken = errors.New("key taken")

func createKV(ctx context.Context, db *sqldb.DB) error {
	_, err := db.W.ExecContext(ctx, `CREATE TABLE kv (k TEXT PRIMARY KEY, v TEXT NOT NULL)`)
	return err
}

// writeKV writes each item with ON CONFLICT DO NOTHING so a taken key fails
// only its own item.
func writeKV(ctx context.Context, tx *sql.Tx, items []kv) ([]error, error) {
	out := make([]error, len(items))
	for i, it := range items {
		if it.hold != nil {
			close(it.started)
			<-it.hold
		}
		if it.value == "panic" {
			panic("writer panicked")
		}
		var v any = it.value
		if it.value == "boom" {
			v = nil
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO kv (k, v) VALUES ($1, $2) ON CONFLICT (k) DO NOTHING`, it.key, v)
		if err != nil {
			return nil, err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			out[i] = errTaken
		}
	}
	return out, nil
}

func countKV(t *testing.T, db *sqldb.DB, where string, args ...any) int {
	t.Helper()
	var n int
	if err := db.R.QueryRowContext(context.Background(), `SELECT COUNT(*) FROM kv `+where, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestGroupCommitConformance(t *testing.T) {
	storetest.Each(t, createKV, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		g := sqldb.NewGroupCommit(db, 16, func(it kv) string { return it.key }, writeKV)
		before := db.GroupCommitStats()

		// 200 writers, 50 distinct keys written 4 times each: every key
		// exactly once, the other three of each key refused alone.
		var wg sync.WaitGroup
		errs := make([]error, 200)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = g.Submit(ctx, kv{key: fmt.Sprintf("k%02d", i%50), value: fmt.Sprint(i)})
			}()
		}
		wg.Wait()
		ok, taken := 0, 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case errors.Is(err, errTaken):
				taken++
			default:
				t.Fatalf("unexpected: %v", err)
			}
		}
		if ok != 50 || taken != 150 || countKV(t, db, "") != 50 {
			t.Fatalf("ok=%d taken=%d rows=%d", ok, taken, countKV(t, db, ""))
		}
		st := db.GroupCommitStats()
		if st.Items-before.Items != 200 || st.Batches-before.Batches > 200 {
			t.Fatalf("stats %+v → %+v", before, st)
		}
	})
}

// An item that breaks the batch's transaction must fail alone: the items
// that shared its batch are retried one by one and commit.
func TestGroupCommitFailingBatch(t *testing.T) {
	storetest.Each(t, createKV, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		// One committer, so the held batch keeps every other item queued.
		g := sqldb.NewGroupCommit(db, 0, nil, writeKV).WithCommitters(1)
		for _, bad := range []string{"boom", "panic"} {
			// A held item keeps the committer busy until all 40 items are
			// queued, so they share one batch.
			started, hold := make(chan struct{}), make(chan struct{})
			held := make(chan error, 1)
			go func() { held <- g.Submit(ctx, kv{key: bad + "-held", value: "ok", started: started, hold: hold}) }()
			<-started
			before := db.GroupCommitStats()
			var wg sync.WaitGroup
			errs := make([]error, 40)
			for i := range errs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					v := "ok"
					if i == 7 {
						v = bad
					}
					errs[i] = g.Submit(ctx, kv{key: fmt.Sprintf("%s-%02d", bad, i), value: v})
				}()
			}
			for deadline := time.Now().Add(10 * time.Second); g.Pending() != len(errs); {
				if time.Now().After(deadline) {
					t.Fatalf("%d of %d items queued", g.Pending(), len(errs))
				}
				runtime.Gosched()
			}
			close(hold)
			wg.Wait()
			if err := <-held; err != nil {
				t.Fatal(err)
			}
			if st := db.GroupCommitStats(); st.Retried != before.Retried+1 || st.Batches != before.Batches+2+40 {
				t.Fatalf("%s: want the held batch, one failed batch of 40 and 40 retries; stats %+v → %+v", bad, before, st)
			}
			for i, err := range errs {
				if i == 7 {
					if err == nil || (bad == "panic" && !strings.Contains(err.Error(), "panic")) {
						t.Fatalf("%s item: %v", bad, err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s: unrelated item %d failed: %v", bad, i, err)
				}
			}
			if n := countKV(t, db, "WHERE k LIKE $1", bad+"-%"); n != 40 {
				t.Fatalf("%s: %d rows, want 39 and the held one", bad, n)
			}
		}
	})
}

// A caller that gave up before its item was taken gets its context's error
// and nothing is written for it.
func TestGroupCommitCancelled(t *testing.T) {
	db := storetest.SQLite(t)
	if err := createKV(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	g := sqldb.NewGroupCommit(db, 0, nil, writeKV)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := g.Submit(ctx, kv{key: "gone", value: "x"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled submit: %v", err)
	}
	// The next submit drains the queue; the cancelled item is dropped.
	if err := g.Submit(context.Background(), kv{key: "here", value: "x"}); err != nil {
		t.Fatal(err)
	}
	if n := countKV(t, db, "WHERE k = $1", "gone"); n != 0 {
		t.Fatalf("cancelled item written")
	}
}

// After a batch of several items the committer yields to runnable
// goroutines before its next batch (gather); items queued meanwhile share
// that batch, and a caller that comes alone afterwards is still committed
// without waiting for company.
func TestGroupCommitGatherAfterBatch(t *testing.T) {
	storetest.Each(t, createKV, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		g := sqldb.NewGroupCommit(db, 0, func(it kv) string { return it.key }, writeKV).WithCommitters(1)
		before := db.GroupCommitStats()
		hold := kv{key: "held", value: "v", started: make(chan struct{}), hold: make(chan struct{})}
		first := make(chan error, 1)
		go func() { first <- g.Submit(ctx, hold) }()
		<-hold.started
		// Queued behind the held batch: these three form the next batch,
		// one of more than one item, after which the committer gathers.
		var queued []chan error
		for i := range 3 {
			done := make(chan error, 1)
			go func() { done <- g.Submit(ctx, kv{key: fmt.Sprintf("q%d", i), value: "v"}) }()
			queued = append(queued, done)
		}
		for g.Pending() != 3 {
			runtime.Gosched()
		}
		close(hold.hold)
		for _, d := range append(queued, first) {
			if err := <-d; err != nil {
				t.Fatal(err)
			}
		}
		lone := make(chan error, 1)
		go func() { lone <- g.Submit(ctx, kv{key: "lone", value: "v"}) }()
		select {
		case err := <-lone:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("a lone submit after a batch was not committed")
		}
		st := db.GroupCommitStats()
		if got := st.Batches - before.Batches; got != 3 {
			t.Fatalf("%d batches, want 3 (held, the three queued, lone)", got)
		}
		if n := countKV(t, db, ""); n != 5 {
			t.Fatalf("%d rows, want 5", n)
		}
	})
}
