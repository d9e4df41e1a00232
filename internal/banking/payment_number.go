package banking

import (
	"context"
	"strconv"
	"sync"
	"time"
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
// per organisation, in blocks (hi/lo): one committed UPDATE reserves a
// block and the process hands its numbers out from memory. A restart skips
// the unused rest of the blocks it held, so numbers jump forward and never
// back; processes sharing one database reserve disjoint blocks. A create
// that carries its own number pays nothing: the service only tests that
// the field is empty.
//
// Why blocks grow and the next one is reserved ahead. A reservation is a
// committed write (an fsync on either database). Taken in line every 64
// creates, it stalled every create of the organisation behind it: on the
// 2026-11-28 Zen 4 host, `bench banking` (whose documents carry no number)
// fell from 0.49–0.51 to 0.40–0.41 of the bare handler on PostgreSQL at
// 1 024 connections, its group commits shrinking from ~190 documents to
// ~47. So the next block is reserved in the background once half of the
// current one is handed out, and a block used up within a second makes
// the next one twice as large (up to maxNumberBlock), one used up over a
// minute makes it half as large (down to minNumberBlock): a busy
// organisation reserves a few times a second at most and never waits,
// and a quiet one skips at most a few dozen numbers on a restart.

// MaxPaymentNumber is the largest number a payment order can carry (six
// digits); the sequence after it starts again at 1.
const MaxPaymentNumber = 999999

// minNumberBlock and maxNumberBlock bound the size of one reservation: a
// write per that many number-less creates, and at most twice that many
// numbers skipped by a restart (the block in use and the one reserved
// ahead).
const (
	minNumberBlock = 16
	maxNumberBlock = 4096
)

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

// orgNumbers is one organisation's numbering: first…last is the block in
// use and next the sequence value to hand out; spareFirst…spareLast is the
// block reserved ahead (spareLast 0: none); pending is closed when the
// reservation in flight ends (nil: none), and failed holds its error for
// the caller waiting on it.
type orgNumbers struct {
	mu                    sync.Mutex
	first, next, last     int64
	spareFirst, spareLast int64
	pending               chan struct{}
	failed                error
	size                  int64     // the next reservation's size
	installed             time.Time // when the block in use was taken up
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
		o = &orgNumbers{size: minNumberBlock}
		n.orgs[orgID] = o
	}
	n.mu.Unlock()

	r, durable := store.(PaymentNumberReserver)
	o.mu.Lock()
	defer o.mu.Unlock()
	for o.next == 0 || o.next > o.last {
		switch {
		case !durable:
			o.first, o.next, o.last = o.last+1, o.last+1, o.last+maxNumberBlock
		case o.spareLast != 0:
			o.adapt(time.Now())
			o.first, o.next, o.last = o.spareFirst, o.spareFirst, o.spareLast
			o.spareFirst, o.spareLast = 0, 0
		default:
			if o.pending == nil {
				o.reserve(r, orgID)
			}
			wait := o.pending
			o.mu.Unlock()
			select {
			case <-wait:
			case <-ctx.Done():
				o.mu.Lock()
				return "", ctx.Err()
			}
			o.mu.Lock()
			if err := o.failed; err != nil && o.spareLast == 0 {
				o.failed = nil
				return "", err
			}
		}
	}
	seq := o.next
	o.next++
	// Half the block is handed out: reserve the next one ahead, so that no
	// create waits for the store when this one runs out.
	if durable && o.spareLast == 0 && o.pending == nil && 2*(o.next-o.first) >= o.last-o.first+1 {
		o.reserve(r, orgID)
	}
	return FormatPaymentNumber(seq), nil
}

// reserve starts a reservation of the next block in the background; o.mu
// is held. Its context is not the create's: the block outlives the request
// that happened to start it.
func (o *orgNumbers) reserve(r PaymentNumberReserver, orgID string) {
	done := make(chan struct{})
	o.pending = done
	size := o.size
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		last, err := r.ReserveNumbers(ctx, orgID, size)
		o.mu.Lock()
		defer o.mu.Unlock()
		if err != nil {
			o.failed = err
		} else {
			o.spareFirst, o.spareLast, o.failed = last-size+1, last, nil
		}
		o.pending = nil
		close(done)
	}()
}

// adapt sizes the reservation after the next from how long the block in
// use lasted: under a second, twice as large; over a minute, half.
func (o *orgNumbers) adapt(now time.Time) {
	if !o.installed.IsZero() {
		switch lasted := now.Sub(o.installed); {
		case lasted < time.Second:
			o.size = min(2*o.size, maxNumberBlock)
		case lasted > time.Minute:
			o.size = max(o.size/2, minNumberBlock)
		}
	}
	o.installed = now
}
