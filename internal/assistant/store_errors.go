package assistant

import (
	"context"
	"errors"
	"time"
)

// FromStore reports whether err came from the Service's store. A transport
// asks it before taking a broken connection for a database that cannot be
// used (sqldb.Unavailable): an upstream server's stream cut short breaks a
// connection in the same words (unexpected EOF, connection reset), and that
// is the engine's failure, answered as such, not a database outage.
func FromStore(err error) bool {
	var se *storeError
	return errors.As(err, &se)
}

// storeError marks an error of the store; it adds nothing to the text, and
// errors.Is and errors.As see through it to the store's own error.
type storeError struct{ err error }

func (e *storeError) Error() string { return e.err.Error() }
func (e *storeError) Unwrap() error { return e.err }

func fromStore(err error) error {
	if err == nil {
		return nil
	}
	return &storeError{err}
}

// markedStore is the store the Service uses: every error of the store it
// wraps comes back marked. It names each method rather than embedding the
// Store, so that a method added to the interface cannot pass through
// unmarked.
type markedStore struct{ s Store }

func (m markedStore) CreateClient(ctx context.Context, c Client, balances []Balance) error {
	return fromStore(m.s.CreateClient(ctx, c, balances))
}

func (m markedStore) Client(ctx context.Context, id string) (Client, error) {
	c, err := m.s.Client(ctx, id)
	return c, fromStore(err)
}

func (m markedStore) SaveToken(ctx context.Context, t Token) error {
	return fromStore(m.s.SaveToken(ctx, t))
}

func (m markedStore) Token(ctx context.Context, hash string) (Token, error) {
	t, err := m.s.Token(ctx, hash)
	return t, fromStore(err)
}

func (m markedStore) DeleteExpiredTokens(ctx context.Context, now time.Time) error {
	return fromStore(m.s.DeleteExpiredTokens(ctx, now))
}

func (m markedStore) Balances(ctx context.Context, clientID string) ([]Balance, error) {
	b, err := m.s.Balances(ctx, clientID)
	return b, fromStore(err)
}

func (m markedStore) Charge(ctx context.Context, b Bill) error {
	return fromStore(m.s.Charge(ctx, b))
}

func (m markedStore) RecordUsage(ctx context.Context, b Bill) error {
	return fromStore(m.s.RecordUsage(ctx, b))
}

func (m markedStore) DeleteAppliedBills(ctx context.Context, before time.Time) error {
	return fromStore(m.s.DeleteAppliedBills(ctx, before))
}

func (m markedStore) Usage(ctx context.Context, clientID string) ([]UsageRecord, error) {
	u, err := m.s.Usage(ctx, clientID)
	return u, fromStore(err)
}

func (m markedStore) SaveFile(ctx context.Context, f File, content []byte, quota int64) error {
	return fromStore(m.s.SaveFile(ctx, f, content, quota))
}

func (m markedStore) File(ctx context.Context, clientID, id string) (File, error) {
	f, err := m.s.File(ctx, clientID, id)
	return f, fromStore(err)
}

func (m markedStore) Files(ctx context.Context, clientID string) ([]File, error) {
	fs, err := m.s.Files(ctx, clientID)
	return fs, fromStore(err)
}

func (m markedStore) FileContent(ctx context.Context, clientID, id string) (File, []byte, error) {
	f, b, err := m.s.FileContent(ctx, clientID, id)
	return f, b, fromStore(err)
}

func (m markedStore) DeleteFile(ctx context.Context, clientID, id string) error {
	return fromStore(m.s.DeleteFile(ctx, clientID, id))
}

func (m markedStore) AcquireLease(ctx context.Context, l Lease, limit int, now time.Time) error {
	return fromStore(m.s.AcquireLease(ctx, l, limit, now))
}

func (m markedStore) RenewLeases(ctx context.Context, ids []string, now, until time.Time) (int, error) {
	n, err := m.s.RenewLeases(ctx, ids, now, until)
	return n, fromStore(err)
}

func (m markedStore) ReleaseLease(ctx context.Context, id string) error {
	return fromStore(m.s.ReleaseLease(ctx, id))
}

func (m markedStore) AuthFailures(ctx context.Context, clientID, addr string, since time.Time, limit int) ([]time.Time, error) {
	t, err := m.s.AuthFailures(ctx, clientID, addr, since, limit)
	return t, fromStore(err)
}

func (m markedStore) AddrAuthFailures(ctx context.Context, addr string, since time.Time, limit int) ([]time.Time, error) {
	t, err := m.s.AddrAuthFailures(ctx, addr, since, limit)
	return t, fromStore(err)
}

func (m markedStore) AddAuthFailure(ctx context.Context, clientID, addr string, at, expired time.Time, addrLimit int) (int, error) {
	n, err := m.s.AddAuthFailure(ctx, clientID, addr, at, expired, addrLimit)
	return n, fromStore(err)
}

func (m markedStore) ForgetAuthFailures(ctx context.Context, clientID, addr string) error {
	return fromStore(m.s.ForgetAuthFailures(ctx, clientID, addr))
}
