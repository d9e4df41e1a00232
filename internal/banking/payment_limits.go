package banking

import (
	"crypto/sha256"
	"sync"
	"sync/atomic"

	"golang.org/x/time/rate"
)

// OpLimiter rate-limits payment operations per access token and operation
// (reference §13: 429 TOO_MANY_REQUESTS; the provider's values are not
// published, so they are configurable). Tokens are kept only as hashes.
type OpLimiter struct {
	Rate  rate.Limit // requests per second per token+operation
	Burst int

	mu sync.Mutex
	m  map[[32]byte]*rate.Limiter
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
	if !lim.Allow() {
		return Errorf(KindTooManyRequests, "Превышен лимит запросов для операции %s, повторите позже", op)
	}
	return nil
}

// Maintenance is the switch that answers payment operations with 503
// UNAVAILABLE_RESOURCE_EXCEPTION while the bank side is being serviced.
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
