package banking

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Login throttling. Failures are counted per login and client address
// together: after loginMaxFailures wrong passwords for one login from one
// address within loginWindow, that address is refused for that login until
// the window passes. Counting per login alone let anyone lock a real user
// out for the whole window with five wrong passwords; counted this way a
// guesser is slowed down at its own address while the user, signing in from
// another, is not. A guesser spreading over many addresses still pays a
// full PBKDF2 per attempt and five attempts per address and window. Behind
// a reverse proxy the address is the client's that the proxy forwards when
// serve's --trusted-proxies names the proxy (web.ClientIP); without it every
// request comes from the proxy's address, and the throttle falls back to
// one per login.
//
// With Identity.LoginFailures set (serve sets the database's), failures are
// kept in the store, where every process of a deployment on one PostgreSQL
// sees them and a restart does not forget them; five guesses per process
// and per restart would otherwise multiply by the processes behind a load
// balancer. Without it (tests, tools) the counters live in the process.
//
// The in-process counters are an LRU of at most loginFailuresMax keys: made-up logins
// cost a guesser nothing, so an unbounded map would grow with every one of
// them. When it is full the key whose last failure is oldest goes first;
// a key evicted that way loses at most loginMaxFailures-1 counted
// failures, and a guesser has to fill the whole LRU with fresh failures
// (each a full PBKDF2 of the server's) to get there.
const (
	loginMaxFailures = 5
	loginWindow      = 15 * time.Minute
	loginFailuresMax = 10_000
)

// dummyPasswordHash is what a login without a usable password hash (an
// unknown login, or a user who cannot sign in interactively) is checked
// against, so the answer costs the same PBKDF2 as a wrong password and its
// timing does not tell which logins exist. Its key is all zeros, which no
// password derives in practice, and it is refused below anyway.
var dummyPasswordHash = fmt.Sprintf("pbkdf2-sha256$%d$%s$%s", pbkdf2Iterations, strings.Repeat("00", 16), strings.Repeat("00", 32))

// LoginFailureStore keeps failed sign-ins for the login throttle.
type LoginFailureStore interface {
	// LoginFailures counts login's failures from client after since.
	LoginFailures(ctx context.Context, login, client string, since time.Time) (int, error)
	// AddLoginFailure records a failure at at, and drops every failure
	// (of any login) at or before expired, which no count looks at again.
	AddLoginFailure(ctx context.Context, login, client string, at, expired time.Time) error
	// ForgetLoginFailures drops login's failures from client.
	ForgetLoginFailures(ctx context.Context, login, client string) error
}

type loginKey struct{ login, client string }

type loginEntry struct {
	key   loginKey
	times []time.Time // the latest failures, at most loginMaxFailures
}

type loginFailures struct {
	mu    sync.Mutex
	m     map[loginKey]*list.Element // of *loginEntry
	order list.List                  // front: the latest failure
	max   int                        // 0: loginFailuresMax (tests lower it)
}

// recent is the number of k's failures within loginWindow before now.
func (f *loginFailures) recent(k loginKey, now time.Time) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	el, ok := f.m[k]
	if !ok {
		return 0
	}
	e := el.Value.(*loginEntry)
	kept := e.times[:0]
	for _, t := range e.times {
		if now.Sub(t) < loginWindow {
			kept = append(kept, t)
		}
	}
	e.times = kept
	if len(kept) == 0 {
		f.order.Remove(el)
		delete(f.m, k)
	}
	return len(kept)
}

// add counts a failure of k at now, evicting the stalest key when full.
func (f *loginFailures) add(k loginKey, now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = map[loginKey]*list.Element{}
	}
	if el, ok := f.m[k]; ok {
		e := el.Value.(*loginEntry)
		if len(e.times) >= loginMaxFailures {
			e.times = append(e.times[:0], e.times[1:]...)
		}
		e.times = append(e.times, now)
		f.order.MoveToFront(el)
		return
	}
	limit := f.max
	if limit <= 0 {
		limit = loginFailuresMax
	}
	for len(f.m) >= limit {
		back := f.order.Back()
		delete(f.m, back.Value.(*loginEntry).key)
		f.order.Remove(back)
	}
	f.m[k] = f.order.PushFront(&loginEntry{key: k, times: []time.Time{now}})
}

// forget drops k's failures after a successful sign-in.
func (f *loginFailures) forget(k loginKey) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if el, ok := f.m[k]; ok {
		f.order.Remove(el)
		delete(f.m, k)
	}
}

// len is the number of keys held.
func (f *loginFailures) len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.m)
}

// Login checks a user's password; client is the caller's network address
// (its IP), which the throttle counts failures by together with the login.
// Every refusal but the throttle's costs one PBKDF2, whether or not the
// login exists.
func (id *Identity) Login(ctx context.Context, login, password, client string) (User, error) {
	now := id.now()
	k := loginKey{login, client}
	n, err := id.recentFailures(ctx, k, now)
	if err != nil {
		return User{}, err
	}
	if n >= loginMaxFailures {
		return User{}, oauthErr("access_denied", "Слишком много неудачных попыток входа, повторите позже")
	}
	check := id.checkPassword
	if check == nil {
		check = CheckPassword
	}
	u, err := id.Store.GetUserByLogin(ctx, login)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return User{}, err
	}
	hash := u.PasswordHash
	if err != nil || hash == "" {
		hash = dummyPasswordHash
	}
	if !check(hash, password) || hash == dummyPasswordHash {
		if err := id.addFailure(ctx, k, now); err != nil {
			return User{}, err
		}
		return User{}, oauthErr("access_denied", "Неверный логин или пароль")
	}
	if id.LoginFailures != nil {
		if err := id.LoginFailures.ForgetLoginFailures(ctx, login, client); err != nil {
			return User{}, err
		}
	} else {
		id.failures.forget(k)
	}
	return u, nil
}

func (id *Identity) recentFailures(ctx context.Context, k loginKey, now time.Time) (int, error) {
	if id.LoginFailures == nil {
		return id.failures.recent(k, now), nil
	}
	return id.LoginFailures.LoginFailures(ctx, k.login, k.client, now.Add(-loginWindow))
}

// addFailure records a wrong password. A failure that cannot be recorded
// fails the request: answering "wrong password" without counting it would
// give a guesser unthrottled attempts while the store refuses writes.
func (id *Identity) addFailure(ctx context.Context, k loginKey, now time.Time) error {
	if id.LoginFailures == nil {
		id.failures.add(k, now)
		return nil
	}
	return id.LoginFailures.AddLoginFailure(context.WithoutCancel(ctx), k.login, k.client, now, now.Add(-loginWindow))
}
