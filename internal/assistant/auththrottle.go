package assistant

import (
	"context"
	"errors"
	"net/netip"
	"sync"
	"time"
)

// The throttle of failed client-secret checks at the token endpoints
// (POST /api/v2/oauth and the legacy POST /api/v1/token), the assistant's
// counterpart of the banking login throttle (banking/oauth_login.go).
//
// Failures are counted per client id and client address together: after
// AuthFailures wrong secrets for one client id from one address within
// AuthFailureWindow, that address is refused for that client id, before
// any secret is checked, until the oldest of those failures leaves the
// window. Counted per client id alone, anyone who knows a client id (it
// is no secret: it is in the logs and in the authorization key's first
// half) could lock the real client out with a few wrong secrets; counted
// this way a guesser is slowed down at its own address while the client,
// calling from another, is not, and a success forgets only its own
// address's failures, never another's. An unknown client id counts like
// a known one, so the throttle tells no more about which ids exist than
// the 401 does. The address is the one web.ClientIP resolves, the
// forwarded client's behind a proxy named by serve's --trusted-proxies;
// without that flag behind a proxy every caller shares the proxy's count
// per client id.
//
// The failures are kept in the store (Store.AuthFailures and the three
// methods after it), as the banking throttle keeps its own in the
// database under serve, rather than in the process: every process of a
// deployment on one PostgreSQL then counts the same failures, where N
// processes behind a load balancer would otherwise each allow a guesser
// AuthFailures guesses per window, and a restart does not hand out fresh
// guesses. The cost is two reads per token request (the address's
// count and the key's) and one write per failure (and one delete for a success that follows failures); rows
// older than the window go as new failures arrive. Within a process the
// checks of one key run one at a time (authLocks), from the count to the
// failure's write, so a burst of concurrent guesses cannot all pass the
// count before any of them is written; processes sharing the database
// can each let one such guess through at the limit, a few beyond the
// count per window. With secrets of 256 random bits the throttle is a
// brake on guessing and a signal in the logs, not what keeps a secret.
//
// A guesser that makes up a fresh client id for every attempt is never
// refused by the count of one id, and each attempt would write a row. So
// failures are also counted per address across every client id: after
// AuthAddrFailures of them within the window that address is refused for
// every id, a known client's right secret too, before any secret is
// checked, until the oldest of them leaves the window. The store records
// a failure only while its address is under that cap (AddAuthFailure
// counts and writes under one lock of the address), so an address holds
// at most AuthAddrFailures rows however many ids it invents, and the
// table at most that many a failing address a window. The cap is well
// above AuthFailures so that a client's own mistakes hit its id's count
// long before the address's; addresses shared by many clients (a proxy
// without --trusted-proxies) share the cap too.
//
// An IPv6 caller is counted by its /64, the smallest block a provider
// hands one customer (RFC 6177's advice and common practice): a guesser
// holding a /64 has 2^64 addresses, so counted one by one it could rotate
// through them, never reaching a cap and writing a row an attempt. An
// IPv4 address, or an IPv6 one carrying IPv4 (::ffff:a.b.c.d), is counted
// as itself; a string that is no address (a test's name) as it is.
//
// Only a secret that was checked counts: a request refused for a
// malformed Authorization, RqUID or scope never reaches the check. The
// gRPC port takes only bearer tokens, never a client secret, so it has no
// such throttle.
const (
	DefaultAuthFailures      = 5
	DefaultAuthAddrFailures  = 50
	DefaultAuthFailureWindow = 15 * time.Minute
)

// ErrAuthThrottled is the token endpoints' refusal of a client id at an
// address that failed its secret check too often; a ThrottledError
// carries it with the time to wait.
var ErrAuthThrottled = &AuthError{429, 8, "Too Many Requests"}

// ThrottledError is a token request refused by the failed-login
// throttle. RetryAfter is how long until the address may try the client
// id again, which transports send as Retry-After.
type ThrottledError struct{ RetryAfter time.Duration }

func (e *ThrottledError) Error() string { return ErrAuthThrottled.Message }

// Unwrap makes the refusal the token endpoint's 429 (errors.Is and
// errors.As find ErrAuthThrottled).
func (e *ThrottledError) Unwrap() error { return ErrAuthThrottled }

// throttleAddr is the key the throttle counts a caller's address by: an
// IPv6 address's /64 prefix ("2001:db8:1:2::/64"), an IPv4 address (also
// one mapped into IPv6) as itself.
func throttleAddr(addr string) string {
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		return addr
	}
	if ip = ip.Unmap(); ip.Is4() {
		return ip.String()
	}
	p, err := ip.WithZone("").Prefix(64)
	if err != nil {
		return addr
	}
	return p.String()
}

// throttled is the refusal when recent, newest first, holds limit
// failures or more: once the limit-th newest leaves the window, fewer
// than limit are left in it.
func throttled(recent []time.Time, limit int, window time.Duration, now time.Time) *ThrottledError {
	wait := recent[limit-1].Add(window).Sub(now)
	return &ThrottledError{RetryAfter: max(wait, time.Second)}
}

// throttledCredentials checks the throttle for addr and for id at addr,
// then the secret, and counts a wrong one. A failure that cannot be
// recorded fails the request: answering "wrong secret" without counting
// it would give a guesser unthrottled attempts while the store refuses
// writes.
func (s *Service) throttledCredentials(ctx context.Context, id, secret, addr string) (Client, error) {
	limit, addrLimit, window := s.cfg.AuthFailures, s.cfg.AuthAddrFailures, s.cfg.AuthFailureWindow
	if limit < 0 && addrLimit < 0 {
		return s.checkCredentials(ctx, id, secret)
	}
	addr = throttleAddr(addr)
	unlock, err := s.authLocks.lock(ctx, authKey{id, addr})
	if err != nil {
		return Client{}, err
	}
	defer unlock()
	now := s.cfg.Now()
	since := now.Add(-window)
	if addrLimit > 0 {
		recent, err := s.store.AddrAuthFailures(ctx, addr, since, addrLimit)
		if err != nil {
			return Client{}, err
		}
		if len(recent) >= addrLimit {
			return Client{}, throttled(recent, addrLimit, window, now)
		}
	}
	var recent []time.Time
	if limit > 0 {
		if recent, err = s.store.AuthFailures(ctx, id, addr, since, limit); err != nil {
			return Client{}, err
		}
		if len(recent) >= limit {
			return Client{}, throttled(recent, limit, window, now)
		}
	}
	c, err := s.checkCredentials(ctx, id, secret)
	if errors.Is(err, ErrCredentials) {
		return Client{}, s.countFailure(context.WithoutCancel(ctx), id, addr, len(recent), now)
	}
	if err != nil {
		return Client{}, err
	}
	// Only a success that follows failures writes: most token requests
	// have none to forget.
	if len(recent) > 0 {
		if err := s.store.ForgetAuthFailures(ctx, id, addr); err != nil {
			return Client{}, err
		}
	}
	return c, nil
}

// countFailure records a wrong secret for id at addr, which had recent
// failures counted, and returns ErrCredentials, or the throttle's refusal
// when other requests from addr filled its cap since it was read (the
// checks of other ids from one address run concurrently).
func (s *Service) countFailure(ctx context.Context, id, addr string, recent int, now time.Time) error {
	limit, addrLimit, window := s.cfg.AuthFailures, max(s.cfg.AuthAddrFailures, 0), s.cfg.AuthFailureWindow
	n, err := s.store.AddAuthFailure(ctx, id, addr, now, now.Add(-window), addrLimit)
	if err != nil {
		return err
	}
	if addrLimit > 0 && n >= addrLimit {
		full, err := s.store.AddrAuthFailures(ctx, addr, now.Add(-window), addrLimit)
		if err != nil {
			return err
		}
		if len(full) < addrLimit {
			// The window moved on between the write and this read.
			return ErrCredentials
		}
		return throttled(full, addrLimit, window, now)
	}
	// One line when an address reaches a limit, not one per refusal,
	// which a guesser could turn into a flood.
	if addrLimit > 0 && n+1 == addrLimit {
		s.cfg.Log.WarnContext(ctx, "assistant: token requests throttled after failed secret checks across client ids",
			"addr", addr, "failures", addrLimit, "window", window.String())
	}
	if limit > 0 && recent+1 == limit {
		// The id is logged only in a client id's form: a caller that
		// swapped its id and secret would otherwise put the secret in
		// the log.
		logged := "(not a client id)"
		if IsUUID(id) {
			logged = id
		}
		s.cfg.Log.WarnContext(ctx, "assistant: token requests throttled after failed secret checks",
			"client_id", logged, "addr", addr, "failures", limit, "window", window.String())
	}
	return ErrCredentials
}

type authKey struct{ clientID, addr string }

// authLocks serialises the throttle's checks of one key in this process.
// An entry lives while requests hold or wait for it, so the map is as
// large as the token requests under way, whatever ids callers make up.
type authLocks struct {
	mu sync.Mutex
	m  map[authKey]*authLock
}

type authLock struct {
	held chan struct{} // a token while the key is held
	refs int           // requests holding or waiting for it
}

// lock waits for k's turn, or for ctx to end.
func (l *authLocks) lock(ctx context.Context, k authKey) (unlock func(), err error) {
	l.mu.Lock()
	if l.m == nil {
		l.m = map[authKey]*authLock{}
	}
	e := l.m[k]
	if e == nil {
		e = &authLock{held: make(chan struct{}, 1)}
		l.m[k] = e
	}
	e.refs++
	l.mu.Unlock()
	release := func() {
		l.mu.Lock()
		if e.refs--; e.refs == 0 {
			delete(l.m, k)
		}
		l.mu.Unlock()
	}
	select {
	case e.held <- struct{}{}:
		return func() { <-e.held; release() }, nil
	case <-ctx.Done():
		release()
		return nil, ctx.Err()
	}
}

// len is the number of keys held or waited for.
func (l *authLocks) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.m)
}
