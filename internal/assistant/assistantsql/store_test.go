package assistantsql_test

import (
	"context"
	"crypto/rand"
	"errors"
	"sync"
	"testing"
	"time"

	"partnerapi/internal/assistant"
	"partnerapi/internal/assistant/assistantsql"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

func TestStoreConformance(t *testing.T) {
	storetest.Each(t, assistantsql.Migrate, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := assistantsql.New(db)
		c := assistant.Client{ID: "c1", SecretHash: "h", Scope: assistant.ScopeB2B, CreatedAt: time.Unix(100, 0)}
		if err := s.CreateClient(ctx, c, []assistant.Balance{{Model: "m", Tokens: 100}}); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateClient(ctx, c, nil); !errors.Is(err, assistant.ErrConflict) {
			t.Fatalf("duplicate client: %v, want ErrConflict", err)
		}
		got, err := s.Client(ctx, "c1")
		if err != nil || got.Scope != assistant.ScopeB2B || got.SecretHash != "h" || got.CreatedAt.Unix() != 100 {
			t.Fatalf("Client = %+v, %v", got, err)
		}
		if _, err := s.Client(ctx, "nope"); !errors.Is(err, assistant.ErrNotFound) {
			t.Fatalf("missing client: %v", err)
		}

		exp := time.UnixMilli(5_000_123)
		if err := s.SaveToken(ctx, assistant.Token{Hash: "t1", ClientID: "c1", Scope: assistant.ScopeB2B, ExpiresAt: exp}); err != nil {
			t.Fatal(err)
		}
		tok, err := s.Token(ctx, "t1")
		if err != nil || !tok.ExpiresAt.Equal(exp) || tok.ClientID != "c1" {
			t.Fatalf("Token = %+v, %v", tok, err)
		}
		if err := s.DeleteExpiredTokens(ctx, exp.Add(time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Token(ctx, "t1"); !errors.Is(err, assistant.ErrNotFound) {
			t.Fatalf("expired token still there: %v", err)
		}

		// Concurrent charges must all land: 10 × 7 from 100 leaves 30.
		var wg sync.WaitGroup
		for range 10 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := s.Charge(ctx, prepaid("c1", "m", 7)); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		bs, err := s.Balances(ctx, "c1")
		if err != nil || len(bs) != 1 || bs[0].Tokens != 30 {
			t.Fatalf("Balances = %+v, %v", bs, err)
		}
		if err := s.Charge(ctx, prepaid("c1", "m", 50)); err != nil {
			t.Fatal(err)
		}
		bs, _ = s.Balances(ctx, "c1")
		if bs[0].Tokens != 0 {
			t.Fatalf("balance below zero or not charged: %+v", bs)
		}
		if err := s.Charge(ctx, prepaid("c1", "m", 1)); !errors.Is(err, assistant.ErrPaymentRequired) {
			t.Fatalf("charge on empty balance: %v", err)
		}
		if err := s.Charge(ctx, prepaid("c1", "other", 1)); !errors.Is(err, assistant.ErrPaymentRequired) {
			t.Fatalf("charge on no balance: %v", err)
		}

		for _, n := range []int64{5, 6} {
			if err := s.RecordUsage(ctx, postpaid("c1", "m", n)); err != nil {
				t.Fatal(err)
			}
		}
		us, err := s.Usage(ctx, "c1")
		if err != nil || len(us) != 1 || us[0].Tokens != 11 {
			t.Fatalf("Usage = %+v, %v", us, err)
		}

		appliedBillsConformance(t, db)
	})
}

// appliedBillsConformance: a bill applied again with its id, as the retry
// of a bill whose COMMIT went through but whose answer was lost is,
// charges nothing, prepaid or postpaid, and so do concurrent attempts of
// one id; a refused charge applies no id; and DeleteAppliedBills forgets
// only the ids of bills made before its time.
func appliedBillsConformance(t *testing.T, db *sqldb.DB) {
	ctx := context.Background()
	s := assistantsql.New(db)
	if err := s.CreateClient(ctx, assistant.Client{ID: "c2", SecretHash: "h", Scope: assistant.ScopePers, CreatedAt: time.Unix(100, 0)},
		[]assistant.Balance{{Model: "m", Tokens: 100}}); err != nil {
		t.Fatal(err)
	}
	balance := func() int64 {
		bs, err := s.Balances(ctx, "c2")
		if err != nil || len(bs) != 1 {
			t.Fatalf("Balances = %+v, %v", bs, err)
		}
		return bs[0].Tokens
	}
	usage := func() int64 {
		us, err := s.Usage(ctx, "c2")
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		for _, u := range us {
			n += u.Tokens
		}
		return n
	}
	charge, record := prepaid("c2", "m", 10), postpaid("c2", "m", 4)
	for range 2 {
		if err := s.Charge(ctx, charge); err != nil {
			t.Fatal(err)
		}
		if err := s.RecordUsage(ctx, record); err != nil {
			t.Fatal(err)
		}
	}
	if balance() != 90 || usage() != 4 {
		t.Fatalf("one id applied twice: balance %d, usage %d; want 90 and 4", balance(), usage())
	}
	// Concurrent retries of one bill, as two processes replaying one
	// journal would make: one charge.
	again := prepaid("c2", "m", 7)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.Charge(ctx, again); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if balance() != 83 {
		t.Fatalf("one id charged concurrently: balance %d, want 83", balance())
	}
	// A charge refused for an exhausted balance applied nothing: once the
	// balance is there, the same bill charges.
	if err := s.CreateClient(ctx, assistant.Client{ID: "c3", SecretHash: "h", Scope: assistant.ScopePers, CreatedAt: time.Unix(100, 0)},
		[]assistant.Balance{{Model: "m", Tokens: 0}}); err != nil {
		t.Fatal(err)
	}
	refused := prepaid("c3", "m", 5)
	if err := s.Charge(ctx, refused); !errors.Is(err, assistant.ErrPaymentRequired) {
		t.Fatalf("charge of an empty balance: %v", err)
	}
	// The store has no top-up yet; an operator's UPDATE stands for one.
	if _, err := db.W.ExecContext(ctx, `UPDATE assistant_balances SET tokens = 20 WHERE client_id = 'c3'`); err != nil {
		t.Fatal(err)
	}
	if err := s.Charge(ctx, refused); err != nil {
		t.Fatal(err)
	}
	if bs, _ := s.Balances(ctx, "c3"); len(bs) != 1 || bs[0].Tokens != 15 {
		t.Fatalf("a refused bill charged later: %+v, want 15 left", bs)
	}

	// Pruning: ids of bills made before the cut are forgotten (a retry
	// would charge again), later ones are kept.
	old, recent := prepaid("c2", "m", 1), prepaid("c2", "m", 2)
	old.MadeAt, recent.MadeAt = time.UnixMilli(1_000_000), time.UnixMilli(3_000_000)
	for _, b := range []assistant.Bill{old, recent} {
		if err := s.Charge(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	if balance() != 80 {
		t.Fatalf("balance %d, want 80", balance())
	}
	if err := s.DeleteAppliedBills(ctx, time.UnixMilli(2_000_000)); err != nil {
		t.Fatal(err)
	}
	for _, b := range []assistant.Bill{old, recent} {
		if err := s.Charge(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	if balance() != 79 {
		t.Fatalf("after pruning: balance %d, want 79 (only the pruned id charged again)", balance())
	}
}

// prepaid and postpaid make a bill with a fresh id, as the service does.
func prepaid(client, model string, tokens int64) assistant.Bill {
	return assistant.Bill{ID: newBillID(), ClientID: client, Model: model, Prepaid: true, Tokens: tokens, MadeAt: time.Now()}
}

func postpaid(client, model string, tokens int64) assistant.Bill {
	b := prepaid(client, model, tokens)
	b.Prepaid = false
	return b
}

func newBillID() string { return rand.Text() }
