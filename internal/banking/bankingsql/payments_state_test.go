package bankingsql

import (
	"context"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// PaymentState must answer exactly what the slow path (load the document,
// rebuild its digest) answers, before and after the hash is cached and
// after the status moves.
func TestPaymentStateConformance(t *testing.T) {
	storetest.Each(t, MigratePayments, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := NewPaymentStore(db)
		at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
		id := "7d444840-9dc0-11d1-b245-5ffdce74fad2"
		if err := s.CreatePayment(ctx, storedPayment("org1", id), []banking.StatusChange{{Status: banking.StatusCreated, At: at}}); err != nil {
			t.Fatal(err)
		}
		slow := func() banking.State {
			sp, err := s.GetPayment(ctx, "org1", id)
			if err != nil {
				t.Fatal(err)
			}
			return banking.State{BankStatus: sp.Status, BankComment: banking.Comment(sp.Comment), ChannelInfo: sp.Channel, CrucialFieldsHash: banking.CrucialFieldsHash(&sp.Doc)}
		}
		for i := range 2 { // the second read uses the cached hash
			got, err := s.PaymentState(ctx, "org1", id, banking.DigestFormat{})
			if err != nil || got != slow() || len(got.CrucialFieldsHash) != 64 {
				t.Fatalf("read %d: %+v %v, want %+v", i, got, err, slow())
			}
		}
		if _, err := s.AdvancePayment(ctx, "org1", id, banking.StatusCreated, []banking.SignatureRole{banking.RoleFirst},
			[]banking.StatusChange{{Status: banking.StatusPartSigned, At: at.Add(time.Second)}}); err != nil {
			t.Fatal(err)
		}
		if got, err := s.PaymentState(ctx, "org1", id, banking.DigestFormat{}); err != nil || got != slow() || got.BankStatus != banking.StatusPartSigned {
			t.Fatalf("after advance: %+v %v", got, err)
		}
		// A hash cached in one digest format is not the answer in another:
		// the state carries the hash of the format asked for, each cached
		// in its turn.
		crlf := banking.DigestFormat{CRLF: true, Alphabetical: true}
		sp, err := s.GetPayment(ctx, "org1", id)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			got, err := s.PaymentState(ctx, "org1", id, crlf)
			if err != nil || got.CrucialFieldsHash != crlf.CrucialFieldsHash(&sp.Doc) || got.CrucialFieldsHash == slow().CrucialFieldsHash {
				t.Fatalf("read %d in %s: %+v %v", i, crlf, got, err)
			}
		}
		if got, err := s.PaymentState(ctx, "org1", id, banking.DigestFormat{}); err != nil || got != slow() {
			t.Fatalf("default after %s: %+v %v", crlf, got, err)
		}
		// Another organisation's document and an unknown one are not found,
		// cached hash or not.
		for _, org := range []string{"org2", "org1"} {
			ext := id
			if org == "org1" {
				ext = "missing"
			}
			if _, err := s.PaymentState(ctx, org, ext, banking.DigestFormat{}); banking.KindOf(err) != banking.KindDataNotFound {
				t.Fatalf("%s/%s: %v", org, ext, err)
			}
		}
	})
}
