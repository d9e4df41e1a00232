package banking

import (
	"crypto/sha256"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// OpLimiter rate-limits the API's operations per access token and operation
// (reference §13: 429 TOO_MANY_REQUESTS; the provider's values are not
// published, so they are configurable). Tokens are kept only as hashes.
type OpLimiter struct {
	Rate  rate.Limit // requests per second per token+operation
	Burst int

	mu sync.Mutex
	m  map[[32]byte]*rate.Limiter
}

// NewOpLimiter is an OpLimiter of perSecond operations a second per token
// and operation (0: unlimited) with burst (0 reads as 1). A negative rate
// is refused: golang.org/x/time/rate never refills a bucket whose rate is
// negative, so each token's operation was let through its burst and then
// refused with 429 for good, with no Retry-After, the misconfiguration
// seen only as partners' failures. A rate that is not a number compares
// false with everything and is refused too, and so is a negative burst,
// which the limiter read as 1.
func NewOpLimiter(perSecond float64, burst int) (*OpLimiter, error) {
	if math.IsNaN(perSecond) || perSecond < 0 {
		return nil, fmt.Errorf("rate must be ≥ 0 (0: unlimited), got %v", perSecond)
	}
	if burst < 0 {
		return nil, fmt.Errorf("burst must be ≥ 0, got %d", burst)
	}
	return &OpLimiter{Rate: rate.Limit(perSecond), Burst: burst}, nil
}

// maxLimiters bounds memory: past it the table starts afresh, which at
// worst forgives some partners one burst.
const maxLimiters = 100_000

// Allow reports a KindTooManyRequests error when token has used up its
// budget for op. A nil limiter or a zero rate allows everything.
func (l *OpLimiter) Allow(token, op string) error {
	if l == nil || l.Rate == 0 {
		return nil
	}
	key := sha256.Sum256([]byte(op + "\x00" + token))
	l.mu.Lock()
	if l.m == nil || len(l.m) >= maxLimiters {
		l.m = map[[32]byte]*rate.Limiter{}
	}
	lim, ok := l.m[key]
	if !ok {
		lim = rate.NewLimiter(l.Rate, max(l.Burst, 1))
		l.m[key] = lim
	}
	l.mu.Unlock()
	now := time.Now()
	if !lim.AllowN(now, 1) {
		e := Errorf(KindTooManyRequests, "Превышен лимит запросов для операции %s, повторите позже", op)
		// The bucket refills at Rate a second, so the call that would be
		// let through again is the one after the missing fraction of a
		// token has come: the 429 says when (Retry-After), and a client
		// that waits that long is not refused again for the same budget.
		missing := 1 - lim.TokensAt(now)
		e.RetryAfter = time.Duration(missing / float64(l.Rate) * float64(time.Second))
		return e
	}
	return nil
}

// Maintenance is the switch that answers the API's business operations
// with 503 UNAVAILABLE_RESOURCE_EXCEPTION while the bank side is being
// serviced.
type Maintenance struct{ on atomic.Bool }

// Set turns maintenance on or off.
func (m *Maintenance) Set(on bool) { m.on.Store(on) }

// Check returns the 503 error while maintenance is on.
func (m *Maintenance) Check() error {
	if m != nil && m.on.Load() {
		return Errorf(KindUnavailable, "Сервис временно недоступен: проводятся технические работы")
	}
	return nil
}

// Gate is the maintenance switch and the rate limit of the banking API's
// business operations: payments, webhook settings, certificate requests,
// business cards and their limits, client-info and crypto info. One Gate
// is shared by every service that has operations, so one switch puts the
// whole API into maintenance, as the bank's own maintenance window does,
// and one table keeps the budgets (reference §13 lists 503 and 429 for
// the API as a whole, not for payments alone). Each service calls Check
// after the caller is authenticated and before it reads or writes
// anything, so a 503 or a 429 says nothing about any organisation's data.
// A nil Gate, like its nil parts, lets everything through.
type Gate struct {
	Limits      *OpLimiter
	Maintenance *Maintenance
}

// Check applies the maintenance switch and then the rate limit to one
// call of operation op with token: a call refused for maintenance does
// not spend its budget.
func (g *Gate) Check(token, op string) error {
	if g == nil {
		return nil
	}
	if err := g.Maintenance.Check(); err != nil {
		return err
	}
	return g.Limits.Allow(token, op)
}
