package assistant

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"partnerapi/internal/bearer"
)

// Config holds the service's tunables (reference §5: make them configurable).
type Config struct {
	TokenTTL time.Duration    // DefaultTokenTTL when 0
	Limits   map[Scope]int    // concurrent requests per client by scope
	BareIDs  bool             // list models by bare name instead of name:version
	Now      func() time.Time // for tests
	// TokenRate is the token requests per second a client may make
	// (provider: 10).
	TokenRate int
	// AuthFailures is how many failed secret checks of one client id
	// from one address within AuthFailureWindow refuse that address for
	// that id (auththrottle.go): DefaultAuthFailures when 0, no count
	// per id when negative (AuthAddrFailures below is apart).
	// AuthFailureWindow is DefaultAuthFailureWindow when 0.
	AuthFailures      int
	AuthFailureWindow time.Duration
	// AuthAddrFailures is how many failed secret checks from one
	// address, of any client ids, within AuthFailureWindow refuse that
	// address for every id: DefaultAuthAddrFailures when 0, no cap when
	// negative.
	AuthAddrFailures int
	// MaxFileBytes bounds one uploaded file (DefaultMaxFileBytes).
	MaxFileBytes int64
	// FileQuotaBytes bounds the bytes of all of a client's files
	// (DefaultFileQuotaBytes when 0; no limit when negative).
	FileQuotaBytes int64
	// AICheckThreshold is the mean surprisal, in nats a token, under which
	// POST /ai/check calls a window of text generated (AICheckThreshold).
	AICheckThreshold float64
	// Log receives what no transport can report: a failed bill of a chat
	// whose client is gone. Nil discards it.
	Log *slog.Logger
	// LocalLimits says that no other process uses the store's database
	// (SQLite, whose data directory serve locks), so that the count of
	// concurrent requests in memory is the whole count and Acquire writes
	// no lease (limits.go).
	LocalLimits bool
	// Billed, when set, hears every bill once it is in the store: the
	// model, whether the client is prepaid (charged from its balance) or
	// postpaid (usage recorded), and the tokens billed. serve counts them
	// for /metrics.
	Billed func(model string, prepaid bool, tokens int64)
	// Unavailable tells a store error that passes (the database cannot
	// be used for the moment: sqldb.Unavailable in serve) from one that
	// does not. A bill that fails with the first is kept and charged when
	// the store takes it again (billing.go) instead of being lost with
	// the answer already given. Nil: every bill error is final.
	Unavailable func(error) bool
	// BillRetry is how often kept bills are tried again (5 s when 0).
	BillRetry time.Duration
	// Billing and Renewals, when set, hear the outcome of each pass of
	// the service's background loops: the retry of kept bills and the
	// renewal of concurrent-request leases (background.Worker in serve,
	// which logs a failing streak once and counts it).
	Billing, Renewals Reporter
	// Journal, when set, keeps the bills kept while the store cannot take
	// them on local disk, and hands NewService those a previous process
	// left (billing.go). Nil: they live in memory only.
	Journal BillJournal
	// LeaseTTL is how long a concurrent-request slot's lease counts in
	// the store without renewal (DefaultLeaseTTL): how soon the slots of
	// a process that died are free again.
	LeaseTTL time.Duration
}

// Service is the assistant domain: clients, tokens, models, chat.
type Service struct {
	store  Store
	engine Engine
	cfg    Config

	mu        sync.Mutex
	active    map[string]int      // requests under way by client, in this process
	held      map[string]struct{} // ids of this process's leases in the store
	bills     billQueue           // bills kept while the store could not take them (billing.go)
	stopRenew chan struct{}       // ends the renewal loop; nil while it is not running
	// tokenTimes are each client's token requests within the last second
	// (allowToken); tokenSwept is when the clients with none were last
	// dropped from it.
	tokenTimes map[string][]time.Time
	tokenSwept time.Time
	issued     atomic.Int64
	authLocks  authLocks // the throttle's checks of one key, one at a time (auththrottle.go)
	// leaseNow is the clock of the concurrent-request leases (limits.go):
	// time.Now, apart from Config.Now, which tests move forward by hours
	// to expire tokens and bills; a lease test sets its own
	// (export_test.go).
	leaseNow func() time.Time
}

// NewService builds the service, filling defaults.
func NewService(store Store, engine Engine, cfg Config) *Service {
	if cfg.TokenTTL == 0 {
		cfg.TokenTTL = DefaultTokenTTL
	}
	if cfg.Limits == nil {
		cfg.Limits = map[Scope]int{ScopePers: 1, ScopeB2B: 10, ScopeCorp: 10}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.TokenRate == 0 {
		cfg.TokenRate = 10
	}
	if cfg.AuthFailures == 0 {
		cfg.AuthFailures = DefaultAuthFailures
	}
	if cfg.AuthAddrFailures == 0 {
		cfg.AuthAddrFailures = DefaultAuthAddrFailures
	}
	if cfg.AuthFailureWindow <= 0 {
		cfg.AuthFailureWindow = DefaultAuthFailureWindow
	}
	if cfg.MaxFileBytes == 0 {
		cfg.MaxFileBytes = DefaultMaxFileBytes
	}
	if cfg.FileQuotaBytes == 0 {
		cfg.FileQuotaBytes = DefaultFileQuotaBytes
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.LeaseTTL <= 0 {
		cfg.LeaseTTL = DefaultLeaseTTL
	}
	s := &Service{store: markedStore{store}, engine: engine, cfg: cfg, active: map[string]int{}, held: map[string]struct{}{},
		tokenTimes: map[string][]time.Time{}, leaseNow: time.Now}
	s.replayBills()
	return s
}

// Credentials are what `client create` prints once; only hashes are stored.
type Credentials struct {
	ClientID         string `json:"client_id"`
	ClientSecret     string `json:"client_secret"`
	AuthorizationKey string `json:"authorization_key"`
}

// CreateClient provisions a client with optional prepaid balances, under a
// new random id and secret.
func (s *Service) CreateClient(ctx context.Context, scope Scope, balances []Balance) (Credentials, error) {
	return s.CreateClientWith(ctx, "", "", scope, balances)
}

// CreateClientWith provisions a client under the id and secret its caller
// chose, each new and random when empty: a team's CI configuration holds its
// test client's authorization key as it holds the provider's, so the client
// it creates on a fresh server must have that key. The id is a UUID, as the
// provider's are, and the secret is ChosenSecretValid's, since only its
// unsalted hash is stored; an id already taken is ErrConflict.
func (s *Service) CreateClientWith(ctx context.Context, id, secret string, scope Scope, balances []Balance) (Credentials, error) {
	if id == "" {
		id = newUUID()
	}
	if secret == "" {
		secret = newSecret()
	}
	if !IsUUID(id) {
		return Credentials{}, fmt.Errorf("client id %q is not a UUID", id)
	}
	if !ChosenSecretValid(secret) {
		return Credentials{}, errors.New("client secret must be 32-128 characters of A-Z a-z 0-9 _ -")
	}
	err := s.store.CreateClient(ctx, Client{ID: id, SecretHash: HashSecret(secret), Scope: scope, CreatedAt: s.cfg.Now()}, balances)
	if err != nil {
		return Credentials{}, err
	}
	return Credentials{id, secret, base64.StdEncoding.EncodeToString([]byte(id + ":" + secret))}, nil
}

// ChosenSecretValid reports whether a secret a caller chose may stand for a
// generated one: 32-128 characters of [A-Za-z0-9_-], which a generated
// secret, a UUID and `openssl rand -hex 16` all are. The length is what keeps
// the stored SHA-256, unsalted and fast, out of a guesser's reach.
func ChosenSecretValid(s string) bool {
	if len(s) < 32 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// IsUUID reports whether s is a UUID in the 36-character form.
func IsUUID(s string) bool { return uuidRE.MatchString(s) }

// IssueToken checks a Basic authorization value and a requested scope and
// returns a fresh access token. addr is the caller's address (its IP),
// which the throttle of failed secret checks counts by with the client id
// (auththrottle.go).
func (s *Service) IssueToken(ctx context.Context, authorization, rqUID, scope, addr string) (string, time.Time, error) {
	if !IsUUID(rqUID) {
		return "", time.Time{}, ErrRqUID
	}
	id, secret, err := ParseBasic(authorization)
	if err != nil {
		return "", time.Time{}, err
	}
	if scope == "" {
		return "", time.Time{}, ErrScopeEmpty
	}
	sc, ok := ParseScope(scope)
	if !ok {
		return "", time.Time{}, ErrScopeInvalid
	}
	c, err := s.throttledCredentials(ctx, id, secret, addr)
	if err != nil {
		return "", time.Time{}, err
	}
	if !s.allowToken(c.ID) {
		return "", time.Time{}, ErrTokenRate
	}
	if sc != c.Scope {
		return "", time.Time{}, ErrScopeNotEntitled
	}
	return s.issue(ctx, c)
}

// IssueLegacyToken is the SDKs' old password flow (reference §1: POST
// {base_url}/token with Basic user:password): the user is the client id,
// the password its secret, checked and rate-limited as IssueToken checks
// an authorization key, since both are the same Base64 of id:secret. The
// token is of the client's own scope, which the flow cannot name, and
// lives as long as an OAuth token. Its failures count in the same
// throttle as the OAuth endpoint's, by client id and addr.
func (s *Service) IssueLegacyToken(ctx context.Context, authorization, addr string) (string, time.Time, error) {
	id, secret, err := ParseBasic(authorization)
	if err != nil {
		return "", time.Time{}, err
	}
	c, err := s.throttledCredentials(ctx, id, secret, addr)
	if err != nil {
		return "", time.Time{}, err
	}
	if !s.allowToken(c.ID) {
		return "", time.Time{}, ErrTokenRate
	}
	return s.issue(ctx, c)
}

// checkCredentials finds the client of id whose secret is secret. An
// unknown client and a wrong secret are the same ErrCredentials, so that
// an answer does not tell which client ids exist.
func (s *Service) checkCredentials(ctx context.Context, id, secret string) (Client, error) {
	c, err := s.store.Client(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return Client{}, ErrCredentials
	} else if err != nil {
		return Client{}, err
	}
	if subtle.ConstantTimeCompare([]byte(c.SecretHash), []byte(HashSecret(secret))) != 1 {
		return Client{}, ErrCredentials
	}
	return c, nil
}

// issue stores a fresh token of c's scope, valid for TokenTTL.
func (s *Service) issue(ctx context.Context, c Client) (string, time.Time, error) {
	if s.issued.Add(1)%100 == 0 {
		// Tokens are never renewed in place, so expired rows would pile up;
		// every hundredth issuance sweeps them, once ExpiredTokenGrace has
		// passed. A failed sweep is retried by the next one and does not
		// refuse this token.
		_ = s.store.DeleteExpiredTokens(ctx, s.cfg.Now().Add(-ExpiredTokenGrace))
	}
	tok := newSecret()
	exp := s.cfg.Now().Add(s.cfg.TokenTTL).Truncate(time.Millisecond)
	if err := s.store.SaveToken(ctx, Token{Hash: HashSecret(tok), ClientID: c.ID, Scope: c.Scope, ExpiresAt: exp}); err != nil {
		return "", time.Time{}, err
	}
	return tok, exp, nil
}

// DefaultTokenTTL is how long an access token lives unless Config says
// otherwise: the provider's 30 minutes (reference §3.1).
const DefaultTokenTTL = 30 * time.Minute

// ExpiredTokenGrace is how long an expired token stays stored. A token
// still stored is answered 401 "Token has expired", one swept away 401
// "Unauthorized" (reference §2 and §4 give the first for an expired
// token): the npm client never looks at expires_at and sends its token
// until a 401, so one idle past the token's 30 minutes, overnight
// included, still hears why. Both are 401 and make clients authenticate
// again; a day of tokens is a few rows a client.
const ExpiredTokenGrace = 24 * time.Hour

// ParseBasic decodes `Basic base64(client_id:client_secret)`, splitting on
// the first colon (reference §1). The scheme is read in any letter case
// (RFC 7235) and may be left out: the spec shows the authorization data
// without it, while the provider's clients send "Basic " and the key.
// Only SP and HTAB are trimmed, the white space RFC 9110 §5.6.3 allows
// around a field value: strings.TrimSpace would also drop Unicode spaces
// (U+00A0, U+0085, U+3000, …), so a key with one of them appended would
// pass as the key without it.
func ParseBasic(authorization string) (id, secret string, err error) {
	key := strings.Trim(authorization, " \t")
	if len(key) > 6 && strings.EqualFold(key[:6], "basic ") {
		key = key[6:]
	}
	raw, err := base64.StdEncoding.DecodeString(strings.Trim(key, " \t"))
	if err != nil {
		return "", "", ErrAuthHeader
	}
	id, secret, ok := strings.Cut(string(raw), ":")
	if !ok || id == "" {
		return "", "", ErrAuthHeader
	}
	return id, secret, nil
}

// allowToken enforces TokenRate token requests per second per client, as a
// sliding one-second window.
func (s *Service) allowToken(clientID string) bool {
	now := s.cfg.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forgetIdleTokenClients(now)
	recent := s.tokenTimes[clientID][:0]
	for _, t := range s.tokenTimes[clientID] {
		if now.Sub(t) < time.Second {
			recent = append(recent, t)
		}
	}
	if len(recent) >= s.cfg.TokenRate {
		s.tokenTimes[clientID] = recent
		return false
	}
	s.tokenTimes[clientID] = append(recent, now)
	return true
}

// forgetIdleTokenClients drops, at most once a second, the clients whose
// last token request is a second old or more: their windows are empty.
// Before, a client's entry stayed for the life of the process once it had
// asked for a token, so the map grew with every client ever served,
// deleted ones included; now it holds the clients of the last two seconds
// at most, and a sweep costs one look per such client. The caller holds
// s.mu.
func (s *Service) forgetIdleTokenClients(now time.Time) {
	if now.Sub(s.tokenSwept) < time.Second {
		return
	}
	s.tokenSwept = now
	for id, times := range s.tokenTimes {
		// Times are appended in order: the last is the newest.
		if len(times) == 0 || now.Sub(times[len(times)-1]) >= time.Second {
			delete(s.tokenTimes, id)
		}
	}
}

// Principal is the authenticated caller of an /api/v1 request.
type Principal struct {
	ClientID string
	Scope    Scope
	// HeaderClientID is the request's X-Client-ID as NormalizeClientID
	// spells it, "" when it sent none: the caller's own name for whom it
	// acts (reference §2), unrelated to the token's ClientID. Only a
	// file's download is bound to it.
	HeaderClientID string
}

// BearerToken is the token of an Authorization value (an HTTP header or
// gRPC metadata): "Bearer <token>" with the scheme in any letter case, as
// RFC 7235 makes auth schemes case-insensitive and some clients send
// "bearer". Any other value, a bare token included, yields "", which
// Authenticate refuses as a missing token: the reference asks for the
// scheme (assistant.md §2, assistant-grpc.md §1) and every client of the
// provider sends it, so a bare token is no client's form, only a
// leniency that would keep a misconfigured integration from noticing it
// sends the wrong header.
//
// Only SP and HTAB are trimmed: they are the only white space RFC 9110
// §5.6.3 allows around a field value, and RFC 6750 §2.1 puts nothing
// else between the scheme and the token. strings.TrimSpace would also
// drop Unicode spaces (U+00A0, U+0085, U+3000, …), so a token with one
// of them appended would authenticate as the token without it. A token
// that is not RFC 6750's b64token afterwards yields "" as well.
func BearerToken(authorization string) string {
	tok, _ := ParseBearer(authorization)
	return tok
}

// ParseBearer is BearerToken that also says, when there is no token,
// whether the value was a malformed bearer credential (bearer.Parse): the
// transports answer that with RFC 6750's error="invalid_request", and a
// missing token, or another scheme's credentials, with a bare challenge.
func ParseBearer(authorization string) (token string, malformed bool) {
	return bearer.Parse(authorization, false)
}

// Authenticate resolves a bearer token.
func (s *Service) Authenticate(ctx context.Context, token string) (Principal, error) {
	if token == "" {
		return Principal{}, ErrUnauthorized
	}
	t, err := s.store.Token(ctx, HashSecret(token))
	if errors.Is(err, ErrNotFound) {
		return Principal{}, ErrUnauthorized
	} else if err != nil {
		return Principal{}, err
	}
	if !s.cfg.Now().Before(t.ExpiresAt) {
		return Principal{}, ErrTokenExpired
	}
	return Principal{ClientID: t.ClientID, Scope: t.Scope}, nil
}

// ModelID is a model's public id.
func (s *Service) ModelID(m ModelInfo) string {
	if s.cfg.BareIDs {
		return m.Name
	}
	return m.Name + ":" + m.Version
}

// Models lists the engine's models.
func (s *Service) Models(ctx context.Context) ([]ModelInfo, error) {
	return s.engine.Models(ctx)
}

// modelsOf is an engine that can list only the models of the engine
// serving one name (MultiEngine), so resolving a model does not wait for
// every other engine's list.
type modelsOf interface {
	ModelsOf(ctx context.Context, name string) ([]ModelInfo, error)
}

// ResolveModel accepts NAME, NAME:latest and NAME:version.
func (s *Service) ResolveModel(ctx context.Context, id string) (ModelInfo, error) {
	name, version, hasVersion := strings.Cut(id, ":")
	var models []ModelInfo
	var err error
	if r, ok := s.engine.(modelsOf); ok {
		models, err = r.ModelsOf(ctx, name)
	} else {
		models, err = s.engine.Models(ctx)
	}
	if err != nil {
		return ModelInfo{}, err
	}
	for _, m := range models {
		if m.Name != name {
			continue
		}
		if !hasVersion || version == "latest" || version == m.Version {
			return m, nil
		}
	}
	return ModelInfo{}, ErrNoSuchModel
}

// TokenCount is the size of one input.
type TokenCount struct {
	Tokens     int
	Characters int
}

// CountTokens counts the tokens of every input with the model's tokenizer.
func (s *Service) CountTokens(ctx context.Context, model string, inputs []string) ([]TokenCount, error) {
	m, err := s.ResolveModel(ctx, model)
	if err != nil {
		return nil, err
	}
	out := make([]TokenCount, 0, len(inputs))
	for _, in := range inputs {
		n, err := s.engine.CountTokens(ctx, m.Name, in)
		if err != nil {
			return nil, err
		}
		out = append(out, TokenCount{Tokens: n, Characters: len([]rune(in))})
	}
	return out, nil
}

// Balance returns a prepaid client's balances; postpaid clients have none.
func (s *Service) Balance(ctx context.Context, p Principal) ([]Balance, error) {
	if !p.Scope.Prepaid() {
		return nil, ErrPermissionDenied
	}
	return s.store.Balances(ctx, p.ClientID)
}

// Usage returns a client's recorded postpaid usage.
func (s *Service) Usage(ctx context.Context, clientID string) ([]UsageRecord, error) {
	return s.store.Usage(ctx, clientID)
}

// checkFunds refuses a prepaid client whose balance for the model is gone.
func (s *Service) checkFunds(ctx context.Context, p Principal, model string) error {
	if !p.Scope.Prepaid() {
		return nil
	}
	bs, err := s.store.Balances(ctx, p.ClientID)
	if err != nil {
		return err
	}
	for _, b := range bs {
		if b.Model == model && b.Tokens > 0 {
			return nil
		}
	}
	return ErrPaymentRequired
}

func newUUID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
