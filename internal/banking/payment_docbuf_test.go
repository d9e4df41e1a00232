package banking

import (
	"bytes"
	"context"
	"errors"
	"testing"
)

// borrowingPayments is memPayments declaring itself a DocJSONBorrower: it
// keeps a copy of each document's encoding, as such a store must. Its
// first refuse creates fail, and it keeps those documents' DocJSON itself,
// as a commit still in flight after its caller gave up would.
type borrowingPayments struct {
	*memPayments
	refuse  int
	kept    [][]byte // DocJSON of the refused creates, as handed over
	copies  [][]byte // copies of every encoding, as handed over
	answers int
}

func (*borrowingPayments) BorrowsDocJSON() {}

var errCommitInFlight = errors.New("the caller gave up; its commit is still in flight")

func (b *borrowingPayments) CreatePayment(ctx context.Context, sp *StoredPayment, history []StatusChange) error {
	b.copies = append(b.copies, bytes.Clone(sp.DocJSON))
	if len(b.kept) < b.refuse {
		b.kept = append(b.kept, sp.DocJSON)
		return errCommitInFlight
	}
	b.answers++
	c := *sp
	c.DocJSON = bytes.Clone(sp.DocJSON)
	return b.memPayments.CreatePayment(ctx, &c, history)
}

// The pooled encoding of AppendCreateJSON: with a borrowing store every
// answer is the one a store that keeps the bytes gets, the bytes of a
// create that failed are never written again, and a store that does not
// borrow keeps its documents' encodings unchanged by later creates.
func TestCreateJSONDocBuffers(t *testing.T) {
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
	}
	if borrower.answers != n-borrower.refuse {
		t.Fatalf("%d creates stored, want %d", borrower.answers, n-borrower.refuse)
	}
	for i, k := range borrower.kept {
		if !bytes.Equal(k, borrower.copies[i]) {
			t.Fatalf("the encoding of refused create %d was written again:\n%s\nwas\n%s", i, k, borrower.copies[i])
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
