package assistant

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"time"
)

// Scope is a client's contract type; it fixes billing and concurrency.
type Scope string

// The server's scope names (reference §1). The provider's GIGACHAT_API_*
// names are accepted as aliases because every real client defaults to them.
const (
	ScopePers Scope = "ASSISTANT_API_PERS"
	ScopeB2B  Scope = "ASSISTANT_API_B2B"
	ScopeCorp Scope = "ASSISTANT_API_CORP"
)

// ParseScope normalises a scope name, accepting the GIGACHAT_API_* aliases.
// ASCII white space around the name is ignored, as a form or a shell may
// leave it there; strings.TrimSpace would also drop Unicode spaces (NBSP,
// NEL), which no client puts around a scope and which make it the garbled
// scope the reference answers with code 1.
func ParseScope(s string) (Scope, bool) {
	s = strings.Trim(s, " \t\r\n\v\f")
	if rest, ok := strings.CutPrefix(s, "GIGACHAT_API_"); ok {
		s = "ASSISTANT_API_" + rest
	}
	switch Scope(s) {
	case ScopePers, ScopeB2B, ScopeCorp:
		return Scope(s), true
	}
	return "", false
}

// Prepaid reports whether the scope pays from a token balance (PERS, B2B);
// CORP is postpaid and only has its usage recorded.
func (s Scope) Prepaid() bool { return s != ScopeCorp }

// Client is an API client as stored; the secret is kept only as a hash.
type Client struct {
	ID         string
	SecretHash string
	Scope      Scope
	CreatedAt  time.Time
}

// Token is an issued access token as stored (by hash).
type Token struct {
	Hash      string
	ClientID  string
	Scope     Scope
	ExpiresAt time.Time
}

// Balance is the remaining prepaid tokens of one model.
type Balance struct {
	Model  string
	Tokens int64
}

// Bill is the billable tokens of one finished generation. Its ID is
// random and made with the bill, so that the store can tell a retry of a
// bill it has applied from a new one.
type Bill struct {
	ID       string
	ClientID string
	Model    string
	Prepaid  bool // charged from a balance, else recorded as usage
	Tokens   int64
	MadeAt   time.Time
}

// UsageRecord is the postpaid consumption of one client and model.
type UsageRecord struct {
	Model  string
	Tokens int64
}

// Store persists clients, tokens, balances and usage. Every method is one
// transaction.
type Store interface {
	CreateClient(ctx context.Context, c Client, balances []Balance) error
	Client(ctx context.Context, id string) (Client, error)
	SaveToken(ctx context.Context, t Token) error
	Token(ctx context.Context, hash string) (Token, error)
	// DeleteExpiredTokens drops tokens that expired before now.
	DeleteExpiredTokens(ctx context.Context, now time.Time) error
	Balances(ctx context.Context, clientID string) ([]Balance, error)
	// Charge takes b.Tokens from the prepaid balance of b's client and
	// model, never below zero. It returns ErrPaymentRequired when the
	// balance was already exhausted. RecordUsage adds b.Tokens to the
	// postpaid usage of b's client and model. Both apply a bill id once,
	// writing it in the transaction that charges: a bill whose id the
	// store has applied (its commit went through and only the answer was
	// lost) charges nothing again and is no error.
	Charge(ctx context.Context, b Bill) error
	RecordUsage(ctx context.Context, b Bill) error
	// DeleteAppliedBills forgets the ids of the applied bills made before
	// before (AppliedBillRetention).
	DeleteAppliedBills(ctx context.Context, before time.Time) error
	Usage(ctx context.Context, clientID string) ([]UsageRecord, error)

	// Files of a client (reference §3.9). Every read and the delete take
	// the client's id: another client's file is ErrNoSuchFile. SaveFile
	// refuses with ErrFileQuota a file that would take the client's files
	// over quota bytes in all (quota ≤ 0: no limit); DeleteFile frees its
	// bytes.
	SaveFile(ctx context.Context, f File, content []byte, quota int64) error
	File(ctx context.Context, clientID, id string) (File, error)
	Files(ctx context.Context, clientID string) ([]File, error)
	FileContent(ctx context.Context, clientID, id string) (File, []byte, error)
	DeleteFile(ctx context.Context, clientID, id string) error

	// Leases of concurrent-request slots (limits.go), which every process
	// sharing the database counts alike. AcquireLease inserts l unless
	// the client already holds limit leases live at now, and then returns
	// ErrTooManyRequests; it drops the client's expired leases first, and
	// concurrent acquisitions of one client, from any process, never both
	// see room for one. RenewLeases moves the expiry of the named leases
	// still live at now to until and returns how many it moved; an
	// expired lease stays expired. ReleaseLease deletes a lease; an
	// unknown id is no error.
	AcquireLease(ctx context.Context, l Lease, limit int, now time.Time) error
	RenewLeases(ctx context.Context, ids []string, now, until time.Time) (int, error)
	ReleaseLease(ctx context.Context, id string) error

	// Failed secret checks of the token endpoints' throttle
	// (auththrottle.go), by client id and caller address. AuthFailures
	// returns the times of the latest failures after since, newest first,
	// at most limit of them; AddrAuthFailures does the same for one
	// address across every client id. AddAuthFailure drops every failure
	// (of any client and address) at or before expired, which no count
	// looks at again, then counts addr's failures left, of any client id,
	// and records one at at unless addrLimit > 0 and that count is
	// addrLimit or more; it returns the count (0 when addrLimit ≤ 0), and
	// concurrent writes for one address, from any process, never both
	// see room for one. ForgetAuthFailures drops clientID's failures from
	// addr.
	AuthFailures(ctx context.Context, clientID, addr string, since time.Time, limit int) ([]time.Time, error)
	AddrAuthFailures(ctx context.Context, addr string, since time.Time, limit int) ([]time.Time, error)
	AddAuthFailure(ctx context.Context, clientID, addr string, at, expired time.Time, addrLimit int) (int, error)
	ForgetAuthFailures(ctx context.Context, clientID, addr string) error
}

// Lease is one concurrent-request slot of a client as stored: it counts
// against the client's limit until it is released or ExpiresAt passes.
type Lease struct {
	ID        string
	ClientID  string
	ExpiresAt time.Time
}

// Domain errors; chatapi/errors.go maps them to the wire.
var (
	ErrNotFound         = errors.New("not found")
	ErrConflict         = errors.New("already exists")
	ErrUnauthorized     = errors.New("unauthorized")
	ErrTokenExpired     = errors.New("token has expired")
	ErrPaymentRequired  = errors.New("payment required")
	ErrPermissionDenied = errors.New("permission denied")
	ErrTooManyRequests  = errors.New("too many requests")
	ErrNoFunctions      = errors.New("requested model does not support functions")
	ErrNoSuchFile       = errors.New("no such file")
	// ErrFileQuota is the store's refusal of an upload over the client's
	// storage quota; the service answers it as FileQuotaExceeded.
	ErrFileQuota = errors.New("file storage quota exceeded")
)

// AuthError is a token-endpoint failure; Code is the provider's numeric code.
type AuthError struct {
	Status  int
	Code    int
	Message string
}

func (e *AuthError) Error() string { return e.Message }

// Token-endpoint errors (reference §1).
var (
	ErrScopeEmpty       = &AuthError{400, 5, "scope is empty"}
	ErrScopeInvalid     = &AuthError{400, 1, "scope data format invalid"}
	ErrScopeNotEntitled = &AuthError{400, 7, "scope from db not fully includes consumed scope"}
	ErrRqUID            = &AuthError{400, 2, "RqUID header is missing or is not a UUID"}
	ErrAuthHeader       = &AuthError{401, 4, "Can't decode 'Authorization' header"}
	ErrCredentials      = &AuthError{401, 6, "credentials doesn't match db data"}
	// The provider documents the limit (10/s) but not its error; 429 with
	// the envelope of the token endpoint is the natural reading.
	ErrTokenRate = &AuthError{429, 8, "Too Many Requests"}
)

// InvalidParams is a request the service refuses; Status is 400 for a
// malformed request and 422 for a well-formed one with bad values.
type InvalidParams struct {
	Status  int
	Message string
}

func (e *InvalidParams) Error() string { return e.Message }

func badRequest(msg string) error { return &InvalidParams{400, msg} }
func invalid(msg string) error    { return &InvalidParams{422, "Invalid params: " + msg} }

// newSecret returns a high-entropy random token, URL-safe.
func newSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// HashSecret hashes a high-entropy secret for storage; sha256 suffices because
// the secrets are random 256-bit values, not passwords.
func HashSecret(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}
