package banking

import (
	"context"
	"strconv"
	"sync"
)

// A payment order's number (field 3 of form 0401060, reference §4: 1–6
// digits, "bank assigns if absent") is the payer organisation's running
// document number. The form asks for no uniqueness: numbers repeat across
// years and the document's identity is its externalId. The bank's numbers
// increase per organisation, wrap from 999999 to 1, and must never go back
// after a restart.
//
// Why this mechanism. The number is part of the stored document JSON, which
// the service encodes once before the group commit (StoredPayment.DocJSON),
// so it has to be known before the document is queued; a counter updated by
// the committer would have to splice the number into encoded JSON inside
// the single committer, and on PostgreSQL the batch is one statement of
// arrays that would grow for every create. Seeding an in-memory counter
// from the documents (their count or largest number) cannot tell the
// bank's numbers from the partners' and, after a wrap, cannot tell where
// the sequence stood. So the numbers are drawn from a durable counter row
// per organisation, but in blocks (hi/lo): one UPDATE reserves
// NumberBlock numbers and the process hands them out from memory. A
// restart skips the unused rest of the last block, so numbers jump forward
// and never back; processes sharing one database reserve disjoint blocks.
// A create that carries its own number pays nothing: the service only
// tests that the field is empty.

// MaxPaymentNumber is the largest number a payment order can carry (six
// digits); the sequence after it starts again at 1.
const MaxPaymentNumber = 999999

// NumberBlock is how many numbers one reservation takes from the store: a
// write per this many number-less creates, and at most this many numbers
// skipped by a restart.
const NumberBlock = 64

// PaymentNumberReserver is an optional part of a PaymentStore that keeps
// each organisation's payment-number counter durably. ReserveNumbers adds
// n to the organisation's counter in one committed write and returns the
// new value: the caller owns the sequence values (last-n, last]. The
// counter is the unwrapped sequence (it never wraps); FormatPaymentNumber
// turns a value into the six-digit number.
type PaymentNumberReserver interface {
	ReserveNumbers(ctx context.Context, orgID string, n int64) (last int64, err error)
}

// FormatPaymentNumber is the number of sequence value seq (1, 2, …):
// 1…999999, then 1 again.
func FormatPaymentNumber(seq int64) string {
	return strconv.FormatInt((seq-1)%MaxPaymentNumber+1, 10)
}

// paymentNumbers hands out the organisations' numbers from the blocks
// reserved in the store. The zero value is ready; a store that is not a
// PaymentNumberReserver gets numbers counted in memory from 1, which do
// not outlive the process.
type paymentNumbers struct {
	mu   sync.Mutex
	orgs map[string]*orgNumbers
}

// orgNumbers is one organisation's current block: next is the sequence
// value to hand out, last the block's end. Its own lock is held across a
// reservation, so a slow store stalls only that organisation's creates.
type orgNumbers struct {
	mu         sync.Mutex
	next, last int64
}

// assign returns the organisation's next number. Within one process every
// call for one organisation gets the sequence value after the previous
// call's, so numbers are distinct among any 999999 consecutive ones.
func (n *paymentNumbers) assign(ctx context.Context, store PaymentStore, orgID string) (string, error) {
	n.mu.Lock()
	if n.orgs == nil {
		n.orgs = make(map[string]*orgNumbers)
	}
	o := n.orgs[orgID]
	if o == nil {
		o = &orgNumbers{}
		n.orgs[orgID] = o
	}
	n.mu.Unlock()

	o.mu.Lock()
	defer o.mu.Unlock()
	if o.next == 0 || o.next > o.last {
		r, ok := store.(PaymentNumberReserver)
		if !ok {
			o.last = o.next + NumberBlock
			if o.next == 0 {
				o.next = 1
			}
		} else {
			last, err := r.ReserveNumbers(ctx, orgID, NumberBlock)
			if err != nil {
				return "", err
			}
			o.next, o.last = last-NumberBlock+1, last
		}
	}
	seq := o.next
	o.next++
	return FormatPaymentNumber(seq), nil
}
