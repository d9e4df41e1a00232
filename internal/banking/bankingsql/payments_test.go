package bankingsql

import (
	"context"
	"sync"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

func storedPayment(org, id string) *banking.StoredPayment {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	return &banking.StoredPayment{OrgID: org, Kind: banking.KindPayDoc, Kopecks: 150050, Status: banking.StatusCreated,
		Channel: "API:p", CreatedAt: now, UpdatedAt: now,
		Doc: banking.Payment{ExternalID: id, Amount: "1500.5", Date: "2026-11-22", Purpose: "Оплата", PayerAccount: "40702810538833411733",
			DepartmentalInfo: &banking.DepartmentalInfo{KBK: "18201061201010000510"}}}
}

// implementedPayment stores org1's payment id, created and implemented at
// at: a final status, so its webhook is queued at once.
func implementedPayment(t *testing.T, store banking.PaymentStore, id string, at time.Time) *banking.StoredPayment {
	t.Helper()
	sp := storedPayment("org1", id)
	sp.Status = banking.StatusImplemented
	if err := store.CreatePayment(context.Background(), sp, []banking.StatusChange{{Status: banking.StatusCreated, At: at}, {Status: banking.StatusImplemented, At: at}}); err != nil {
		t.Fatal(err)
	}
	return sp
}

func TestPaymentStoreConformance(t *testing.T) {
	storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := NewPaymentStore(db)
		at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
		id := "0f8fad5b-d9cb-469f-a165-70867728950e"
		if err := s.CreatePayment(ctx, storedPayment("org1", id), []banking.StatusChange{{Status: banking.StatusCreated, At: at}}); err != nil {
			t.Fatal(err)
		}
		// Same externalId in another organisation is a different document.
		if err := s.CreatePayment(ctx, storedPayment("org2", id), []banking.StatusChange{{Status: banking.StatusCreated, At: at}}); err != nil {
			t.Fatal(err)
		}
		if err := s.CreatePayment(ctx, storedPayment("org1", id), []banking.StatusChange{{Status: banking.StatusCreated, At: at}}); banking.KindOf(err) != banking.KindWorkflow {
			t.Fatalf("duplicate: %v", err)
		}
		got, err := s.GetPayment(ctx, "org1", id)
		if err != nil {
			t.Fatal(err)
		}
		if got.Doc.Amount != "1500.50" || got.Kopecks != 150050 || got.Doc.DepartmentalInfo.KBK != "18201061201010000510" || !got.CreatedAt.Equal(at) {
			t.Fatalf("round trip: %+v", got)
		}
		if _, err := s.GetPayment(ctx, "org3", id); banking.KindOf(err) != banking.KindDataNotFound {
			t.Fatalf("other org: %v", err)
		}
		roles := []banking.SignatureRole{banking.RoleFirst}
		if _, err := s.AdvancePayment(ctx, "org1", id, banking.StatusCreated, roles, []banking.StatusChange{{Status: banking.StatusPartSigned, At: at.Add(time.Second)}}); err != nil {
			t.Fatal(err)
		}
		// A stale from-status loses (a concurrent signer won).
		if _, err := s.AdvancePayment(ctx, "org1", id, banking.StatusCreated, roles, []banking.StatusChange{{Status: banking.StatusPartSigned, At: at}}); banking.KindOf(err) != banking.KindWorkflow {
			t.Fatalf("stale advance: %v", err)
		}
		var hist []banking.StatusChange
		for i, st := range banking.ProcessingPath {
			hist = append(hist, banking.StatusChange{Status: st, At: at.Add(time.Duration(2+i) * time.Second)})
		}
		sp, err := s.AdvancePayment(ctx, "org1", id, banking.StatusPartSigned, append(roles, banking.RoleSecond), hist)
		if err != nil {
			t.Fatal(err)
		}
		if sp.Status != banking.StatusImplemented || len(sp.Roles) != 2 {
			t.Fatalf("after signing: %+v", sp)
		}
		h, err := s.PaymentHistory(ctx, "org1", id)
		if err != nil {
			t.Fatal(err)
		}
		if len(h) != 2+len(banking.ProcessingPath) || h[0].Status != banking.StatusCreated || h[len(h)-1].Status != banking.StatusImplemented || !h[1].At.Equal(at.Add(time.Second)) {
			t.Fatalf("history: %+v", h)
		}
		var queued int
		if err := db.R.QueryRowContext(ctx, `SELECT COUNT(*) FROM banking_payment_webhooks WHERE external_id = $1 AND status = $2`, id, banking.StatusImplemented).Scan(&queued); err != nil || queued != 1 {
			t.Fatalf("webhook outbox: %d %v", queued, err)
		}
	})
}

// 100 concurrent creates of one externalId: exactly one succeeds, the rest
// are WORKFLOW_FAULT (the unique index decides, not a read-then-write).
func TestPaymentStoreConcurrentCreate(t *testing.T) {
	storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
		s := NewPaymentStore(db)
		var wg sync.WaitGroup
		var mu sync.Mutex
		ok, dup := 0, 0
		for range 100 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := s.CreatePayment(context.Background(), storedPayment("org1", "6ba7b810-9dad-41d1-80b4-00c04fd430c8"),
					[]banking.StatusChange{{Status: banking.StatusCreated, At: time.Now()}})
				mu.Lock()
				defer mu.Unlock()
				switch banking.KindOf(err) {
				case banking.KindWorkflow:
					dup++
				default:
					if err != nil {
						t.Error(err)
					} else {
						ok++
					}
				}
			}()
		}
		wg.Wait()
		if ok != 1 || dup != 99 {
			t.Fatalf("ok=%d dup=%d", ok, dup)
		}
	})
}
