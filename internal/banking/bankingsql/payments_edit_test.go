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

// queuedWebhooks counts the outbox rows of org1's document id, of any status.
func queuedWebhooks(t *testing.T, db *sqldb.DB, id string) int {
	t.Helper()
	var n int
	if err := db.R.QueryRowContext(context.Background(), `SELECT COUNT(*) FROM banking_payment_webhooks WHERE org_id = 'org1' AND external_id = $1`,
		id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// checkErrorPayment stores org1's document id in CHECKERROR at at, with
// the signature role its create was sent with.
func checkErrorPayment(t *testing.T, s *PaymentStore, id string, at time.Time) *banking.StoredPayment {
	t.Helper()
	sp := storedPayment("org1", id)
	sp.Status, sp.Comment, sp.Roles = banking.StatusCheckError, "Ошибка в поле operationCode", []banking.SignatureRole{banking.RoleSoleAuthority}
	if err := s.CreatePayment(context.Background(), sp, []banking.StatusChange{{Status: banking.StatusCheckError, Comment: sp.Comment, At: at}}); err != nil {
		t.Fatal(err)
	}
	return sp
}

// editOf is the edit of sp's document to purpose and amount kopecks,
// landing in status with comment at at.
func editOf(t *testing.T, sp *banking.StoredPayment, purpose string, kopecks int64, status, comment string, at time.Time) banking.PaymentEdit {
	t.Helper()
	d := sp.Doc
	d.Purpose, d.Amount = purpose, banking.Amount(banking.FormatKopecks(kopecks))
	doc, err := banking.MarshalPayment(&d)
	if err != nil {
		t.Fatal(err)
	}
	return banking.PaymentEdit{Doc: doc, Kopecks: kopecks, Status: status, Comment: comment, At: at}
}

// A bank user's edit of a document in CHECKERROR
// (banking.PaymentStore.EditPayment): the stored document, amount, status
// and comment become the edit's and the signature roles are cleared, one
// history row records the move, and no outbox row is written — CHECKERROR
// and CREATED are not final. GET …/state's hash follows the new content.
// An edit from a status the document is no longer in (a deletion won, or a
// former edit moved it on), another organisation's and an unknown document
// are refused and nothing is written.
func TestPaymentStoreEditConformance(t *testing.T) {
	storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := NewPaymentStore(db)
		at := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
		const id, gone = "e1000000-0000-4000-8000-000000000001", "e1000000-0000-4000-8000-000000000002"
		sp := checkErrorPayment(t, s, id, at)
		var format banking.DigestFormat
		if st, err := s.PaymentState(ctx, "org1", id, format); err != nil || st.CrucialFieldsHash != format.CrucialFieldsHash(&sp.Doc) {
			t.Fatalf("state before the edit: %+v %v", st, err)
		}
		for i, e := range []banking.PaymentEdit{
			editOf(t, sp, "Оплата, исправлено", 200000, banking.StatusCheckError, "Ошибка в поле date", at.Add(time.Minute)),
			editOf(t, sp, "Оплата по договору", 250000, banking.StatusCreated, "", at.Add(2*time.Minute)),
		} {
			got, err := s.EditPayment(ctx, "org1", id, banking.StatusCheckError, e)
			if err != nil || got.Status != e.Status || got.Comment != e.Comment || got.Kopecks != e.Kopecks || got.Roles != nil ||
				!got.UpdatedAt.Equal(e.At) || !got.CreatedAt.Equal(sp.CreatedAt) || got.Kind != banking.KindPayDoc || got.Channel != "API:p" {
				t.Fatalf("edit %d: %+v %v", i, got, err)
			}
			read, err := s.GetPayment(ctx, "org1", id)
			if err != nil || read.Status != e.Status || read.Doc.Purpose != got.Doc.Purpose || read.Doc.Amount != banking.Amount(banking.FormatKopecks(e.Kopecks)) {
				t.Fatalf("read after edit %d: %+v %v", i, read, err)
			}
			h, err := s.PaymentHistory(ctx, "org1", id)
			if err != nil || len(h) != 2+i || h[1+i] != (banking.StatusChange{Status: e.Status, Comment: e.Comment, At: e.At}) {
				t.Fatalf("history after edit %d: %+v %v", i, h, err)
			}
			st, err := s.PaymentState(ctx, "org1", id, format)
			if err != nil || st.BankStatus != e.Status || string(st.BankComment) != e.Comment || st.CrucialFieldsHash != format.CrucialFieldsHash(&read.Doc) {
				t.Fatalf("state after edit %d: %+v %v, want the hash of the new content", i, st, err)
			}
		}
		if n := queuedWebhooks(t, db, id); n != 0 {
			t.Fatalf("the edits queued %d webhooks, want none", n)
		}

		checkErrorPayment(t, s, gone, at)
		if _, err := s.DeletePayment(ctx, "org1", gone, "", at.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			org, id, says string
			kind          banking.Kind
		}{
			{"org1", id, banking.NotEditable(id, banking.StatusCreated).Error(), banking.KindWorkflow}, // edited already
			{"org1", gone, banking.NotEditable(gone, banking.StatusDeleted).Error(), banking.KindWorkflow},
			{"org2", id, "", banking.KindDataNotFound},
			{"org1", "e1000000-0000-4000-8000-0000000000ff", "", banking.KindDataNotFound},
		} {
			before, _ := s.GetPayment(ctx, tc.org, tc.id)
			history, _ := s.PaymentHistory(ctx, tc.org, tc.id)
			_, err := s.EditPayment(ctx, tc.org, tc.id, banking.StatusCheckError, editOf(t, sp, "Снова", 1, banking.StatusCreated, "", at.Add(time.Hour)))
			if banking.KindOf(err) != tc.kind || tc.says != "" && err.Error() != tc.says {
				t.Fatalf("edit %s of %s: %v, want kind %v %q", tc.id, tc.org, err, tc.kind, tc.says)
			}
			after, _ := s.GetPayment(ctx, tc.org, tc.id)
			if h, _ := s.PaymentHistory(ctx, tc.org, tc.id); len(h) != len(history) || before != nil && (after.Status != before.Status || after.Doc.Purpose != before.Doc.Purpose) {
				t.Fatalf("a refused edit of %s changed it: %+v, history %+v", tc.id, after, h)
			}
		}
		if n := queuedWebhooks(t, db, gone); n != 1 {
			t.Fatalf("%d outbox rows of the deleted document, want its one DELETED", n)
		}
	})
}

// TestConcurrentEditAndDelete races a bank user's edit of a CHECKERROR
// document into CREATED with a deletion of it. Both moves are conditional
// on the status, and CREATED is deletable too, so the deletion always
// lands and the edit lands only when it updated the row first: the
// document ends DELETED either way, never edited after its deletion (a
// DELETED document coming back CREATED), its content and history those of
// the order the two took, and exactly one webhook, the DELETED one, queued.
func TestConcurrentEditAndDelete(t *testing.T) {
	storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := NewPaymentStore(db)
		at := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
		wins := map[string]int{}
		for d := range 20 {
			id := fmt.Sprintf("e2000000-0000-4000-8000-%012d", d)
			sp := checkErrorPayment(t, s, id, at)
			edit := editOf(t, sp, "Оплата, исправлено", 200000, banking.StatusCreated, "", at.Add(time.Second))
			var wg sync.WaitGroup
			var editErr, deleteErr error
			wg.Add(2)
			go func() {
				defer wg.Done()
				_, editErr = s.EditPayment(ctx, "org1", id, banking.StatusCheckError, edit)
			}()
			go func() {
				defer wg.Done()
				_, deleteErr = s.DeletePayment(ctx, "org1", id, "", at.Add(time.Second))
			}()
			wg.Wait()
			if deleteErr != nil {
				t.Fatalf("%s: delete %v, want it to land whether the edit came first or not", id, deleteErr)
			}
			want, purpose := []string{banking.StatusCheckError, banking.StatusCreated, banking.StatusDeleted}, "Оплата, исправлено"
			if editErr != nil {
				if editErr.Error() != banking.NotEditable(id, banking.StatusDeleted).Error() {
					t.Fatalf("%s: edit %v, want success or NotEditable of DELETED", id, editErr)
				}
				want, purpose = []string{banking.StatusCheckError, banking.StatusDeleted}, sp.Doc.Purpose
			}
			wins[map[bool]string{true: "deleted first", false: "edited, then deleted"}[editErr != nil]]++
			got, err := s.GetPayment(ctx, "org1", id)
			if err != nil || got.Status != banking.StatusDeleted || got.Doc.Purpose != purpose {
				t.Fatalf("%s: after the race %+v %v, want DELETED with purpose %q", id, got, err, purpose)
			}
			h, err := s.PaymentHistory(ctx, "org1", id)
			if err != nil || len(h) != len(want) {
				t.Fatalf("%s: history %+v %v, want %v", id, h, err, want)
			}
			for i, st := range want {
				if h[i].Status != st {
					t.Fatalf("%s: history %+v, want %v", id, h, want)
				}
			}
			if finalWebhooks(t, db, id, banking.StatusDeleted) != 1 || queuedWebhooks(t, db, id) != 1 {
				t.Fatalf("%s: want exactly one webhook, the DELETED one", id)
			}
		}
		t.Logf("of 20 races: %v", wins)
	})
}
