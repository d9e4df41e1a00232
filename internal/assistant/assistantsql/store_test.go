package assistantsql_test

import (
	"context"
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
				if err := s.Charge(ctx, "c1", "m", 7); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		bs, err := s.Balances(ctx, "c1")
		if err != nil || len(bs) != 1 || bs[0].Tokens != 30 {
			t.Fatalf("Balances = %+v, %v", bs, err)
		}
		if err := s.Charge(ctx, "c1", "m", 50); err != nil {
			t.Fatal(err)
		}
		bs, _ = s.Balances(ctx, "c1")
		if bs[0].Tokens != 0 {
			t.Fatalf("balance below zero or not charged: %+v", bs)
		}
		if err := s.Charge(ctx, "c1", "m", 1); !errors.Is(err, assistant.ErrPaymentRequired) {
			t.Fatalf("charge on empty balance: %v", err)
		}
		if err := s.Charge(ctx, "c1", "other", 1); !errors.Is(err, assistant.ErrPaymentRequired) {
			t.Fatalf("charge on no balance: %v", err)
		}

		for _, n := range []int64{5, 6} {
			if err := s.RecordUsage(ctx, "c1", "m", n); err != nil {
				t.Fatal(err)
			}
		}
		us, err := s.Usage(ctx, "c1")
		if err != nil || len(us) != 1 || us[0].Tokens != 11 {
			t.Fatalf("Usage = %+v, %v", us, err)
		}
	})
}
