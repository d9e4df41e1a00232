package bankingsql

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// TestPaymentStoreWalkHistory pins the history of documents written in one
// batch whatever shape it has: the processing path at one instant (written
// as the document row's walked_at), the path with a time per step,
// a draft, and a CHECKERROR with its comment. Every document reads back
// exactly its own moves, in order, with their times, and one outbox row per
// final status.
func TestPaymentStoreWalkHistory(t *testing.T) {
	storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := NewPaymentStore(db)
		at := time.Date(2026, 11, 23, 9, 30, 0, 123456000, time.UTC)
		atOnce := func(i int) []banking.StatusChange {
			h := make([]banking.StatusChange, len(banking.ProcessingPath))
			for j, st := range banking.ProcessingPath {
				h[j] = banking.StatusChange{Status: st, At: at.Add(time.Duration(i) * time.Second)}
			}
			return h
		}
		shapes := []struct {
			name    string
			history func(i int) []banking.StatusChange
			final   bool
			// processed: created through CreateProcessed, the service's
			// way for the at-once walk, which must read back alike.
			processed bool
		}{
			{"at-once", atOnce, true, false},
			{"processed", atOnce, true, true},
			{"stepwise", func(i int) []banking.StatusChange { return signedHistory(at.Add(time.Duration(i) * time.Second)) }, true, false},
			{"draft", func(i int) []banking.StatusChange {
				return []banking.StatusChange{{Status: banking.StatusCreated, At: at.Add(time.Duration(i) * time.Second)}}
			}, false, false},
			{"checkerror", func(i int) []banking.StatusChange {
				return []banking.StatusChange{{Status: banking.StatusCheckError, Comment: fmt.Sprintf("Ошибка в поле 'kbk' №%d", i), At: at}}
			}, false, false},
		}
		want := map[string][]banking.StatusChange{}
		var wg sync.WaitGroup
		var mu sync.Mutex
		var errs []error
		for i := range 60 {
			shape := shapes[i%len(shapes)]
			id := fmt.Sprintf("%s-%02d", shape.name, i)
			h := shape.history(i)
			want[id] = h
			wg.Add(1)
			go func() {
				defer wg.Done()
				sp := storedPayment("org1", id)
				last := h[len(h)-1]
				sp.Status, sp.Comment = last.Status, last.Comment
				create := func() error { return s.CreatePayment(ctx, sp, h) }
				if shape.processed {
					create = func() error { return s.CreateProcessed(ctx, sp, h[0].At) }
				}
				if err := create(); err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("%s: %w", id, err))
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		finals := 0
		for id, w := range want {
			got, err := s.PaymentHistory(ctx, "org1", id)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(w) {
				t.Fatalf("%s: %d moves, want %d: %+v", id, len(got), len(w), got)
			}
			for j := range w {
				if got[j].Status != w[j].Status || got[j].Comment != w[j].Comment || !got[j].At.Equal(w[j].At) {
					t.Fatalf("%s move %d: got %+v, want %+v", id, j, got[j], w[j])
				}
			}
			if banking.IsFinal(w[len(w)-1].Status) {
				finals++
			}
		}
		if n := countOutbox(t, s, "org1"); n != finals {
			t.Fatalf("%d outbox rows, want %d", n, finals)
		}
	})
}

// A walk kept as walked_at comes before the moves recorded after the
// create, whatever their times, so a later move never reads back ahead of
// the walk.
func TestPaymentStoreWalkThenLaterMoves(t *testing.T) {
	storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := NewPaymentStore(db)
		at := time.Date(2026, 11, 23, 9, 30, 0, 0, time.UTC)
		walk := make([]banking.StatusChange, len(banking.ProcessingPath))
		for j, st := range banking.ProcessingPath {
			walk[j] = banking.StatusChange{Status: st, At: at}
		}
		sp := storedPayment("org1", "walked")
		sp.Status = banking.StatusImplemented
		if err := s.CreatePayment(ctx, sp, walk); err != nil {
			t.Fatal(err)
		}
		// Earlier than the walk on purpose: order is by recording, not time.
		later := banking.StatusChange{Status: banking.StatusCheckError, Comment: "после исполнения", At: at.Add(-time.Hour)}
		if _, err := s.AdvancePayment(ctx, "org1", "walked", banking.StatusImplemented, nil, []banking.StatusChange{later}); err != nil {
			t.Fatal(err)
		}
		got, err := s.PaymentHistory(ctx, "org1", "walked")
		if err != nil {
			t.Fatal(err)
		}
		want := append(walk, later)
		if len(got) != len(want) {
			t.Fatalf("%d moves, want %d: %+v", len(got), len(want), got)
		}
		for j := range want {
			if got[j].Status != want[j].Status || got[j].Comment != want[j].Comment || !got[j].At.Equal(want[j].At) {
				t.Fatalf("move %d: got %+v, want %+v", j, got[j], want[j])
			}
		}
		if got, err := s.PaymentHistory(ctx, "org1", "absent"); err != nil || len(got) != 0 {
			t.Fatalf("history of an absent document: %+v %v", got, err)
		}
	})
}
