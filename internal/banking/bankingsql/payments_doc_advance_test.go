package bankingsql

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// AdvancePaymentDoc replaces a draft's document with its move (a draft from
// an invoice whose payer its signer completed), AdvancePayment keeps the
// document, and a state read before the change leaves no stale
// crucialFieldsHash behind.
func TestAdvancePaymentDoc(t *testing.T) {
	storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := NewPaymentStore(db)
		at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
		const id = "4b000000-0000-4000-8000-000000000001"
		draft := storedPayment("org1", id)
		draft.Kind, draft.Doc.PayerAccount = banking.KindInvoice, ""
		if err := s.CreatePayment(ctx, draft, []banking.StatusChange{{Status: banking.StatusCreated, At: at}}); err != nil {
			t.Fatal(err)
		}
		before, err := s.PaymentState(ctx, "org1", id, banking.DigestFormat{})
		if err != nil {
			t.Fatal(err)
		}
		completed := draft.Doc
		completed.PayerAccount, completed.PayerINN = "40702810538833411733", "7707083893"
		doc, _ := json.Marshal(completed)
		sp, err := s.AdvancePaymentDoc(ctx, "org1", id, banking.StatusCreated, doc, []banking.SignatureRole{banking.RoleFirst},
			[]banking.StatusChange{{Status: banking.StatusPartSigned, At: at}})
		if err != nil || sp.Doc.PayerAccount != completed.PayerAccount || sp.Status != banking.StatusPartSigned {
			t.Fatalf("advance with the document: %+v %v", sp, err)
		}
		after, err := s.PaymentState(ctx, "org1", id, banking.DigestFormat{})
		if err != nil || after.CrucialFieldsHash != banking.CrucialFieldsHash(&completed) || after.CrucialFieldsHash == before.CrucialFieldsHash {
			t.Fatalf("state after: %+v %v (before %s)", after, err, before.CrucialFieldsHash)
		}
		sp, err = s.AdvancePayment(ctx, "org1", id, banking.StatusPartSigned, []banking.SignatureRole{banking.RoleFirst, banking.RoleSecond},
			[]banking.StatusChange{{Status: banking.StatusSigned, At: at}})
		if err != nil || sp.Doc.PayerAccount != completed.PayerAccount || sp.Doc.PayerINN != completed.PayerINN {
			t.Fatalf("advance without a document: %+v %v", sp, err)
		}
	})
}
