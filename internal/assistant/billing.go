package assistant

import (
	"context"
	"errors"
	"sync"
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

// pendingBill is a bill the store has not taken yet.
type pendingBill struct {
	clientID string
	prepaid  bool
	model    string
	tokens   int64
}

// billQueue holds the kept bills, oldest first, and whether the loop that
// retries them runs.
type billQueue struct {
	flushing sync.Mutex // one flush at a time: the loop's, or Close's
	mu       sync.Mutex
	bills    []pendingBill
	retrying bool
}

// bill charges the billable tokens of a finished generation: a prepaid
// client's balance, a postpaid client's recorded usage. When the store
// cannot be used for the moment (Config.Unavailable), the bill is kept and
// charged once the store takes it again, and bill reports success: the
// client already has its answer, and the bill is not lost with the
// request. A bill the store refuses otherwise is the error.
func (s *Service) bill(ctx context.Context, p Principal, model string, u Usage) error {
	b := pendingBill{clientID: p.ClientID, prepaid: p.Scope.Prepaid(), model: model,
		tokens: int64(u.PromptTokens + u.CompletionTokens - u.PrecachedPromptTokens)}
	if b.tokens <= 0 {
		return nil
	}
	err := s.charge(ctx, b)
	if err == nil || s.cfg.Unavailable == nil || !s.cfg.Unavailable(err) || !s.keep(b) {
		return err
	}
	if s.cfg.Billing != nil {
		s.cfg.Billing.Report(err)
	}
	return nil
}

// charge puts one bill in the store.
func (s *Service) charge(ctx context.Context, b pendingBill) error {
	var err error
	if b.prepaid {
		err = s.store.Charge(ctx, b.clientID, b.model, b.tokens)
		if errors.Is(err, ErrPaymentRequired) {
			// The balance ran out during this generation; the answer was
			// already produced, so it is not refused after the fact.
			return nil
		}
	} else {
		err = s.store.RecordUsage(ctx, b.clientID, b.model, b.tokens)
	}
	if err == nil && s.cfg.Billed != nil {
		s.cfg.Billed(b.model, b.prepaid, b.tokens)
	}
	return err
}

// keep queues b for the retry loop, starting the loop when it is not
// running; false when the queue is full.
func (s *Service) keep(b pendingBill) bool {
	q := &s.bills
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.bills) >= maxKeptBills {
		return false
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
// takes. A bill refused for another reason is dropped with an ERROR line
// naming it, as such a bill was before bills were kept.
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
		actx, cancel := context.WithTimeout(ctx, billAttemptTimeout)
		err := s.charge(actx, b)
		cancel()
		if err != nil && s.cfg.Unavailable(err) {
			if s.cfg.Billing != nil {
				s.cfg.Billing.Report(err)
			}
			return false
		}
		if err != nil {
			s.cfg.Log.Error("assistant: a kept bill was refused and is dropped", "client_id", b.clientID, "model", b.model,
				"tokens", b.tokens, "err", err)
		}
		q.mu.Lock()
		q.bills = q.bills[1:]
		q.mu.Unlock()
	}
}

// KeptBills is the number of bills waiting for the store to take them.
func (s *Service) KeptBills() int {
	s.bills.mu.Lock()
	defer s.bills.mu.Unlock()
	return len(s.bills.bills)
}

// Close tries the kept bills once more, within ctx, and logs each one still
// kept as lost, with its client, model and tokens, so that an operator can
// charge it by hand: they live in memory, and the process is ending.
func (s *Service) Close(ctx context.Context) {
	if s.KeptBills() == 0 {
		return
	}
	s.flushBills(ctx)
	q := &s.bills
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, b := range q.bills {
		s.cfg.Log.Error("assistant: a bill kept while the database was unavailable is lost with the process", "client_id", b.clientID,
			"model", b.model, "tokens", b.tokens, "prepaid", b.prepaid)
	}
	q.bills = nil
}
