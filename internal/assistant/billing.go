package assistant

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// Reporter hears the outcome of each pass of a background loop: nil for a
// pass that worked, else its error (background.Worker in serve).
type Reporter interface{ Report(error) }

// maxKeptBills bounds the bills kept in memory while the store cannot take
// them; past it a bill fails as it did before bills were kept, so an
// outage that never ends cannot exhaust the process's memory.
const maxKeptBills = 100_000

// billAttemptTimeout bounds one attempt at a kept bill, so that a database
// that hangs rather than refuses does not stall the loop.
const billAttemptTimeout = 10 * time.Second

// AppliedBillRetention is how long the store remembers the id of a bill it
// applied, counted from when the bill was made (the time stored with the
// id). A kept bill is retried only while it is younger than
// MaxKeptBillAge, so every retry comes while its id is remembered, with
// three weeks to spare for the clocks of processes sharing a database
// that disagree.
const AppliedBillRetention = 30 * 24 * time.Hour

// MaxKeptBillAge is how long a kept bill is retried. One older than that
// (a database down for a week, or a journal left that long on a data
// directory no serve used) is dropped with an ERROR line naming it, for an
// operator to charge by hand, rather than charged when the store may have
// forgotten that it applied it.
const MaxKeptBillAge = 7 * 24 * time.Hour

// appliedBillSweep is every how many bills the ids of old applied bills
// are forgotten: the table gains a row a bill, and a sweep is one indexed
// DELETE. A variable only so that a test need not make a thousand bills.
var appliedBillSweep int64 = 1000

// BillJournal keeps the kept bills on local disk (billjournal.Journal in
// serve), so that a process that ends before the store takes them, a crash
// or kill -9 included, leaves them to the next one on the same data
// directory instead of losing them.
type BillJournal interface {
	// Bills are the bills that were journaled and not charged when the
	// journal opened, oldest first: a previous process's.
	Bills() []Bill
	// Keep writes b; it returns nil only once b is on disk (fsynced).
	Keep(b Bill) error
	// Charged notes that the store took the bill with this id, or refused
	// it for good, so that it is not charged again after a restart. Its
	// failure costs nothing but a retry, which charges nothing: the store
	// has applied the id.
	Charged(id string) error
}

// billQueue holds the kept bills, oldest first, and whether the loop that
// retries them runs.
type billQueue struct {
	flushing sync.Mutex // one flush at a time: the loop's, or Close's
	mu       sync.Mutex
	bills    []Bill
	retrying bool
	made     atomic.Int64 // bills charged at the first try, for appliedBillSweep
}

// replayBills takes the bills that the journal kept from a previous
// process and starts the loop that charges them.
func (s *Service) replayBills() {
	if s.cfg.Journal == nil {
		return
	}
	bills := s.cfg.Journal.Bills()
	if len(bills) == 0 {
		return
	}
	s.cfg.Log.Warn("assistant: bills kept by a previous process are charged when the database takes them", "bills", len(bills))
	q := &s.bills
	q.mu.Lock()
	defer q.mu.Unlock()
	q.bills = append(q.bills, bills...)
	if !q.retrying {
		q.retrying = true
		go s.retryBills()
	}
}

// bill charges the billable tokens of a finished generation: a prepaid
// client's balance, a postpaid client's recorded usage. When the store
// cannot be used for the moment (Config.Unavailable), the bill is kept,
// in the journal when there is one, and charged once the store takes it
// again, and bill reports success: the client already has its answer,
// and the bill is not lost with the request. A bill the store refuses
// otherwise, or that cannot be kept, is the error.
func (s *Service) bill(ctx context.Context, p Principal, model string, u Usage) error {
	b := Bill{ID: newUUID(), ClientID: p.ClientID, Prepaid: p.Scope.Prepaid(), Model: model,
		Tokens: int64(u.PromptTokens + u.CompletionTokens - u.PrecachedPromptTokens), MadeAt: s.cfg.Now()}
	if b.Tokens <= 0 {
		return nil
	}
	err := s.charge(ctx, b)
	if err == nil {
		if s.bills.made.Add(1)%appliedBillSweep == 0 {
			// A failed sweep is retried by the next one and fails no bill.
			_ = s.store.DeleteAppliedBills(ctx, s.cfg.Now().Add(-AppliedBillRetention))
		}
		return nil
	}
	if !s.unavailable(err) || !s.keep(b) {
		return err
	}
	if s.cfg.Billing != nil {
		s.cfg.Billing.Report(err)
	}
	return nil
}

// unavailable reports whether err says the store cannot be used for the
// moment (Config.Unavailable; with none, no error does).
func (s *Service) unavailable(err error) bool {
	return s.cfg.Unavailable != nil && s.cfg.Unavailable(err)
}

// charge puts one bill in the store.
func (s *Service) charge(ctx context.Context, b Bill) error {
	var err error
	if b.Prepaid {
		err = s.store.Charge(ctx, b)
		if errors.Is(err, ErrPaymentRequired) {
			// The balance ran out during this generation; the answer was
			// already produced, so it is not refused after the fact.
			return nil
		}
	} else {
		err = s.store.RecordUsage(ctx, b)
	}
	if err == nil && s.cfg.Billed != nil {
		s.cfg.Billed(b.Model, b.Prepaid, b.Tokens)
	}
	return err
}

// keep queues b for the retry loop, journaling it first when there is a
// journal, and starts the loop when it is not running; false when the
// queue is full or the journal cannot take b, in which case the bill
// fails as it did before bills were kept.
func (s *Service) keep(b Bill) bool {
	q := &s.bills
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.bills) >= maxKeptBills {
		return false
	}
	if s.cfg.Journal != nil {
		if err := s.cfg.Journal.Keep(b); err != nil {
			s.cfg.Log.Error("assistant: a bill the database could not take could not be journaled either, and fails", "client_id", b.ClientID,
				"model", b.Model, "tokens", b.Tokens, "err", err)
			return false
		}
	}
	q.bills = append(q.bills, b)
	if !q.retrying {
		q.retrying = true
		go s.retryBills()
	}
	return true
}

// retryBills tries the kept bills every Config.BillRetry until none is
// left; it runs only while there are some, so an idle service runs none.
func (s *Service) retryBills() {
	every := s.cfg.BillRetry
	if every <= 0 {
		every = 5 * time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for range t.C {
		if s.flushBills(context.Background()) {
			return
		}
	}
}

// flushBills charges the kept bills, oldest first, until the store cannot
// be used; it reports the pass and returns true when no bill is left, in
// which case the loop is marked stopped under the same lock that keep
// takes. A bill refused for another reason, or older than MaxKeptBillAge,
// is dropped with an ERROR line naming it, as such a bill was before bills
// were kept.
func (s *Service) flushBills(ctx context.Context) (empty bool) {
	q := &s.bills
	q.flushing.Lock()
	defer q.flushing.Unlock()
	for {
		q.mu.Lock()
		if len(q.bills) == 0 {
			q.retrying = false
			q.mu.Unlock()
			if s.cfg.Billing != nil {
				s.cfg.Billing.Report(nil)
			}
			return true
		}
		b := q.bills[0]
		q.mu.Unlock()
		if age := s.cfg.Now().Sub(b.MadeAt); age > MaxKeptBillAge {
			s.cfg.Log.Error("assistant: a kept bill is too old to charge safely and is dropped; charge it by hand", "bill_id", b.ID,
				"client_id", b.ClientID, "model", b.Model, "tokens", b.Tokens, "prepaid", b.Prepaid, "made_at", b.MadeAt)
		} else {
			actx, cancel := context.WithTimeout(ctx, billAttemptTimeout)
			err := s.charge(actx, b)
			cancel()
			if err != nil && s.unavailable(err) {
				if s.cfg.Billing != nil {
					s.cfg.Billing.Report(err)
				}
				return false
			}
			if err != nil {
				s.cfg.Log.Error("assistant: a kept bill was refused and is dropped", "bill_id", b.ID, "client_id", b.ClientID, "model", b.Model,
					"tokens", b.Tokens, "err", err)
			}
		}
		if s.cfg.Journal != nil {
			if err := s.cfg.Journal.Charged(b.ID); err != nil {
				s.cfg.Log.Warn("assistant: a charged bill is still in the journal; the next start retries it, which charges nothing",
					"bill_id", b.ID, "err", err)
			}
		}
		q.mu.Lock()
		q.bills = q.bills[1:]
		q.mu.Unlock()
	}
}

// KeptBills is the number of bills waiting for the store to take them,
// those a previous process journaled included.
func (s *Service) KeptBills() int {
	s.bills.mu.Lock()
	defer s.bills.mu.Unlock()
	return len(s.bills.bills)
}

// Close tries the kept bills once more, within ctx. Without a journal it
// logs each one still kept as lost, with its client, model and tokens, so
// that an operator can charge it by hand: they live in memory, and the
// process is ending. With one they stay in it for the next start.
func (s *Service) Close(ctx context.Context) {
	if s.KeptBills() == 0 {
		return
	}
	s.flushBills(ctx)
	q := &s.bills
	q.mu.Lock()
	defer q.mu.Unlock()
	if s.cfg.Journal != nil {
		if len(q.bills) > 0 {
			s.cfg.Log.Warn("assistant: bills the database could not take stay in the journal and are charged after the next start",
				"bills", len(q.bills))
		}
		q.bills = nil
		return
	}
	for _, b := range q.bills {
		s.cfg.Log.Error("assistant: a bill kept while the database was unavailable is lost with the process", "bill_id", b.ID,
			"client_id", b.ClientID, "model", b.Model, "tokens", b.Tokens, "prepaid", b.Prepaid)
	}
	q.bills = nil
}
