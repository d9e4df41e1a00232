package bankingsql

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// One UUID in two cases is one document: the second create is a duplicate
// whether it is queued alone or in one batch with the first, every lookup
// finds the document by either case, and the document keeps the partner's
// text. A row stored before keys were folded is still found by the exact
// text it was stored under.
func TestPaymentExternalIDCase(t *testing.T) {
	storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := NewPaymentStore(db)
		at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
		const upper = "0F8FAD5B-D9CB-469F-A165-70867728950E"
		lower := strings.ToLower(upper)
		created := []banking.StatusChange{{Status: banking.StatusCreated, At: at}}
		if err := s.CreatePayment(ctx, storedPayment("org1", upper), created); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name string
			org  string
			id   string
			dup  bool
		}{
			{"the lower case", "org1", lower, true},
			{"a mixed case", "org1", "0f8fad5b-D9CB-469f-a165-70867728950E", true},
			{"the same case", "org1", upper, true},
			{"another organisation", "org2", lower, false},
		} {
			err := s.CreatePayment(ctx, storedPayment(tc.org, tc.id), created)
			if tc.dup != (banking.KindOf(err) == banking.KindWorkflow) || !tc.dup && err != nil {
				t.Errorf("%s: %v, duplicate %v", tc.name, err, tc.dup)
			}
		}
		for _, id := range []string{upper, lower} {
			sp, err := s.GetPayment(ctx, "org1", id)
			if err != nil || sp.Doc.ExternalID != upper {
				t.Fatalf("get %s: %+v %v", id, sp, err)
			}
			if st, err := s.PaymentState(ctx, "org1", id, banking.DigestFormat{}); err != nil || st.BankStatus != banking.StatusCreated {
				t.Fatalf("state %s: %+v %v", id, st, err)
			}
		}
		if _, err := s.AdvancePayment(ctx, "org1", lower, banking.StatusCreated, []banking.SignatureRole{banking.RoleFirst},
			[]banking.StatusChange{{Status: banking.StatusPartSigned, At: at}}); err != nil {
			t.Fatal(err)
		}
		if h, err := s.PaymentHistory(ctx, "org1", upper); err != nil || len(h) != 2 || h[1].Status != banking.StatusPartSigned {
			t.Fatalf("history by the other case: %+v %v", h, err)
		}
		// A row stored by an earlier version under the partner's upper-case text.
		const legacy = "1E8FAD5B-D9CB-469F-A165-70867728950E"
		if _, err := db.W.ExecContext(ctx, `INSERT INTO banking_payments (org_id, external_id, kind, doc, kopecks, status, comment, roles, channel, created_at, updated_at)
			VALUES ('org1', $1, 'PAY_DOC_RU', $2, 1, 'CREATED', '', '', 'API:p', 1, 1)`, legacy, `{"externalId":"`+legacy+`"}`); err != nil {
			t.Fatal(err)
		}
		if sp, err := s.GetPayment(ctx, "org1", legacy); err != nil || sp.Doc.ExternalID != legacy {
			t.Fatalf("legacy row: %+v %v", sp, err)
		}
		if _, err := s.AdvancePayment(ctx, "org1", legacy, banking.StatusCreated, nil,
			[]banking.StatusChange{{Status: banking.StatusPartSigned, At: at}}); err != nil {
			t.Fatal(err)
		}
		if h, err := s.PaymentHistory(ctx, "org1", legacy); err != nil || len(h) != 1 {
			t.Fatalf("legacy history: %+v %v", h, err)
		}
	})
}

// Creates of one UUID in several cases at once (the group commit keeps
// documents of one key out of one batch by the folded key): exactly one is
// written, the others are duplicates.
func TestPaymentExternalIDCaseConcurrent(t *testing.T) {
	storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := NewPaymentStore(db).WithCommitDelay(5 * time.Millisecond)
		at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
		ids := []string{"2a8fad5b-d9cb-469f-a165-70867728950e", "2A8FAD5B-D9CB-469F-A165-70867728950E", "2a8fad5b-D9CB-469f-a165-70867728950e"}
		errs := make([]error, len(ids))
		var wg sync.WaitGroup
		for i, id := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = s.CreatePayment(ctx, storedPayment("org1", id), []banking.StatusChange{{Status: banking.StatusCreated, At: at}})
			}()
		}
		wg.Wait()
		written := 0
		for _, err := range errs {
			switch {
			case err == nil:
				written++
			case banking.KindOf(err) != banking.KindWorkflow:
				t.Fatalf("create: %v", err)
			}
		}
		if written != 1 {
			t.Fatalf("%d of %d written: %v", written, len(ids), errs)
		}
	})
}
