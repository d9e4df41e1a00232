package banking

import (
	"bytes"
	"context"
	"errors"
	"testing"
)

// borrowingPayments is memPayments declaring itself a PaymentBorrower: it
// keeps copies of what each create hands it, as such a store must. Its
// first refuse creates fail, and it keeps those documents themselves, as a
// commit still in flight after its caller gave up would.
type borrowingPayments struct {
	*memPayments
	refuse  int
	kept    []*StoredPayment // the refused creates' documents, as handed over
	copies  []StoredPayment  // copies of every document, as handed over
	answers int
}

func (*borrowingPayments) BorrowsPayment() {}

var errCommitInFlight = errors.New("the caller gave up; its commit is still in flight")

func (b *borrowingPayments) CreatePayment(ctx context.Context, sp *StoredPayment, history []StatusChange) error {
	c := *sp
	c.DocJSON = bytes.Clone(sp.DocJSON)
	b.copies = append(b.copies, c)
	if len(b.kept) < b.refuse {
		b.kept = append(b.kept, sp)
		return errCommitInFlight
	}
	b.answers++
	return b.memPayments.CreatePayment(ctx, &c, history)
}

// The pooled documents of AppendCreateJSON: with a borrowing store every
// answer is the one a store that keeps what it is handed gets, and what a
// create that failed handed over is never written again; a store that
// does not borrow keeps its documents' encodings unchanged by later
// creates.
func TestCreateJSONPooledDocuments(t *testing.T) {
	ctx := context.Background()
	borrower := &borrowingPayments{memPayments: newMemPayments(), refuse: 2}
	pooled, p := newTestPayments(t)
	pooled.Store = borrower
	keeper := newMemPayments()
	plain, _ := newTestPayments(t)
	plain.Store = keeper
	sole := []DigestSignature{{Base64Encoded: "MIIB", CertificateUUID: SandboxCertSole}}
	const n = 40
	for i := range n {
		d := payOrder("6d000000-0000-4000-8000-0000000000"+itoa(10+i), "2026-11-22")
		if i%2 == 1 {
			d.DigestSignatures = sole // a signed document's answer is longer
		}
		d.Number = itoa(100 + i) // the two services would number them apart
		d.Purpose = "Оплата по счёту " + itoa(i) + " " + string(bytes.Repeat([]byte("x"), i*3))
		got, err := pooled.AppendCreateJSON(ctx, nil, p, d)
		if i < borrower.refuse {
			if !errors.Is(err, errCommitInFlight) {
				t.Fatalf("create %d: %v, want the store's refusal", i, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("create %d: %v", i, err)
		}
		want, err := plain.AppendCreateJSON(ctx, nil, p, d)
		if err != nil {
			t.Fatalf("create %d without borrowing: %v", i, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("create %d answered (%d bytes)\n%s\nwant\n%s", i, len(got), got, want)
		}
		// The hash of the digest built in the pooled buffer is the one
		// the digest's own string gives.
		if h := `"crucialFieldsHash":"` + CrucialFieldsHash(&d) + `"`; !bytes.Contains(got, []byte(h)) {
			t.Fatalf("create %d answered\n%s\nwithout %s", i, got, h)
		}
	}
	if borrower.answers != n-borrower.refuse {
		t.Fatalf("%d creates stored, want %d", borrower.answers, n-borrower.refuse)
	}
	for i, k := range borrower.kept {
		c := borrower.copies[i]
		if k.Doc.ExternalID != c.Doc.ExternalID || k.Doc.Purpose != c.Doc.Purpose || k.Status != c.Status || !bytes.Equal(k.DocJSON, c.DocJSON) {
			t.Fatalf("refused create %d was written again: %s %q %s\n%s\nwas %s %q %s\n%s", i,
				k.Doc.ExternalID, k.Doc.Purpose, k.Status, k.DocJSON, c.Doc.ExternalID, c.Doc.Purpose, c.Status, c.DocJSON)
		}
	}
	for key, sp := range keeper.docs {
		want, err := MarshalPayment(&sp.Doc)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(sp.DocJSON, want) {
			t.Fatalf("%s: a kept encoding changed after its create:\n%s\nwant\n%s", key, sp.DocJSON, want)
		}
	}
}
