package banking

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unsafe"
)

// Lifetimes of OAuth artefacts (reference §3).
const (
	AccessTokenTTL   = 60 * time.Minute
	RefreshTokenTTL  = 180 * 24 * time.Hour
	RefreshReserve   = 2 * time.Hour // default of Identity.RefreshReserve
	AuthCodeTTL      = 2 * time.Minute
	ClientSecretSize = 40
	// ClientSecretLifetime is how long the provider's client secrets live
	// (reference §3); Identity.ClientSecretTTL is the configured one.
	ClientSecretLifetime = 40 * 24 * time.Hour
)

// ErrNotFound is what a Store returns for a missing row; the services turn
// it into the right domain error for their caller.
var ErrNotFound = errors.New("banking: not found")

// ErrDuplicate is what a Store returns when a unique key already exists.
var ErrDuplicate = errors.New("banking: already exists")

// Organisation is a client organisation of the bank.
type Organisation struct {
	ID       string
	Name     string // short name
	FullName string
	INN      string
	KPP      string
	OGRN     string
	// JuridicalAddress is the registered address user-info names as
	// orgJuridicalAddress (reference §3); "" when the bank was not told.
	JuridicalAddress string
	// TerBank is the territorial bank serving the organisation, user-info's
	// terBank (reference §3); "" reads it from the accounts' BICs
	// (TerritorialBank).
	TerBank string
}

// Account states (reference §10).
const (
	AccountOpen    = "OPEN"
	AccountBlocked = "BLOCKED"
	AccountClosed  = "CLOSED"
)

// Account is a settlement account of an organisation.
type Account struct {
	Number      string // 20 digits
	OrgID       string
	BIC         string
	CorrAccount string
	Currency    string // ISO numeric, "810" for roubles
	Name        string
	Status      string
	OpenDate    string // YYYY-MM-DD
	// CloseDate is the day a CLOSED account was closed (YYYY-MM-DD),
	// client-info's closeDate (reference §10); "" when the account is not
	// closed or the bank was not told the day.
	CloseDate string
}

// User is a person of a client organisation who signs in and signs.
type User struct {
	ID    string
	OrgID string
	Login string
	Name  string
	Email string
	// Phone is the user's phone number, user-info's phone_number
	// (reference §3), in international form (+7…); "" when not known.
	Phone        string
	PasswordHash string // bcrypt; empty: cannot sign in interactively
	// SigningMethod is the user's signing tool type (reference §4.2):
	// SigningToken or SigningOneTimePassword; empty means SigningToken.
	SigningMethod string
	// Executive tells that the user is the organisation's sole executive
	// body (ЕИО: its director or the entrepreneur), user-info's
	// individualExecutiveAgency.
	Executive bool
}

// Signing tool types of a user. Reference §4.2 names OneTimePassword (the
// signer confirms with a one-time code) as the only type that may confirm
// payments by QR; a user who signs with a certificate key on a token is
// SigningToken, which is what every user is unless made otherwise, since
// the users this service knows sign with GOST certificates.
const (
	SigningToken           = "Token"
	SigningOneTimePassword = "OneTimePassword"
)

// ValidPhone reports whether s is a phone number in international form, +
// and 10 to 15 digits (ITU-T E.164), as user-info's phone_number carries it
// and clients read it (condo prefixes a + only where one is missing).
func ValidPhone(s string) bool {
	return len(s) >= 11 && len(s) <= 16 && s[0] == '+' && allDigits(s[1:])
}

// ValidSigningMethod reports whether m names a signing tool type.
func ValidSigningMethod(m string) bool {
	return m == SigningToken || m == SigningOneTimePassword
}

// SigningMethodOf is u's signing tool type, SigningToken when unset.
func (u User) SigningMethodOf() string {
	if u.SigningMethod == "" {
		return SigningToken
	}
	return u.SigningMethod
}

// PartnerApp is a partner's OAuth client.
type PartnerApp struct {
	ClientID     string
	Name         string
	SecretHash   string // sha256 hex of the client secret
	RedirectURIs []string
	// SecretExpiresAt is when the secret stops authenticating the app;
	// zero: never.
	SecretExpiresAt time.Time
	// Scopes are the scopes the app is registered for; authorize refuses
	// any other. Empty means unrestricted, which is what apps made before
	// the list existed (the sandbox's seeded app among them) keep, so an
	// upgrade breaks no integration.
	Scopes []string
}

// ScopesOutside returns those of requested the app is not registered for,
// in request order; none when the app is unrestricted.
func (a PartnerApp) ScopesOutside(requested []string) []string {
	if len(a.Scopes) == 0 {
		return nil
	}
	var out []string
	for _, s := range requested {
		if !slices.Contains(a.Scopes, s) {
			out = append(out, s)
		}
	}
	return out
}

// Certificate is a user's signing certificate (a /v1/crypto entry).
type Certificate struct {
	UUID     string
	UserID   string
	OrgID    string
	DER      []byte
	Issuer   string
	Serial   string
	TypeName string        // crypto profile: "SMS", "TOKEN" or "UKEP_UL"
	Role     SignatureRole // what a signature with it counts as
	Active   bool
}

// Token kinds.
const (
	TokenAccess  = "access"
	TokenRefresh = "refresh"
)

// Token is an issued access or refresh token; only its hash is stored.
type Token struct {
	Hash         string
	Kind         string
	ClientID     string
	OrgID        string
	UserID       string
	Scopes       []string
	ExpiresAt    time.Time
	RevokedAt    time.Time // zero: not revoked
	ReserveUntil time.Time // refresh tokens: set on first use
	// Chain names the grant a token belongs to: a code exchange or a CLI
	// issue starts one, and every refresh adds its pair to the chain of the
	// token it used. Only the newest refresh token of a chain and its
	// reserve stay usable (RotateRefresh).
	Chain string
}

// usableAt reports whether the token still authenticates at now.
func (t Token) usableAt(now time.Time) bool {
	if !t.RevokedAt.IsZero() || !now.Before(t.ExpiresAt) {
		return false
	}
	return t.ReserveUntil.IsZero() || now.Before(t.ReserveUntil)
}

// AuthCode is a one-time OAuth authorization code; only its hash is stored.
type AuthCode struct {
	Hash        string
	ClientID    string
	OrgID       string
	UserID      string
	RedirectURI string
	Scopes      []string
	Challenge   string // PKCE S256 code_challenge; empty when not used
	Nonce       string
	ExpiresAt   time.Time
}

// IdentityStore is the persistence of organisations, accounts, users,
// partner applications, offers, certificates, tokens and codes. Every
// method is one transaction.
type IdentityStore interface {
	CreateOrg(ctx context.Context, o Organisation) error
	GetOrg(ctx context.Context, id string) (Organisation, error)
	AddAccount(ctx context.Context, a Account) error
	GetAccount(ctx context.Context, number string) (Account, error)
	ListAccounts(ctx context.Context, orgID string) ([]Account, error)
	CreateUser(ctx context.Context, u User) error
	GetUser(ctx context.Context, id string) (User, error)
	GetUserByLogin(ctx context.Context, login string) (User, error)
	ListUsers(ctx context.Context, orgID string) ([]User, error)
	// SetUserSigningMethod changes the user's signing tool type;
	// ErrNotFound when the user is absent.
	SetUserSigningMethod(ctx context.Context, id, method string) error
	CreateApp(ctx context.Context, a PartnerApp) error
	GetApp(ctx context.Context, clientID string) (PartnerApp, error)
	// SetAppSecret replaces the app's secret hash and its expiry (zero:
	// never); ErrNotFound when absent.
	SetAppSecret(ctx context.Context, clientID, secretHash string, expiresAt time.Time) error
	// ChangeAppSecret replaces the app's secret hash and expiry only while
	// its secret hash is still oldHash, so of two changes made with one
	// secret only the first lands; ErrNotFound when the app is absent or
	// its secret has changed.
	ChangeAppSecret(ctx context.Context, clientID, oldHash, newHash string, expiresAt time.Time) error
	// SetAppScopes replaces the scopes the app is registered for (empty:
	// unrestricted); ErrNotFound when absent.
	SetAppScopes(ctx context.Context, clientID string, scopes []string) error
	// SignOffer records that the partner app's offer is signed for account.
	SignOffer(ctx context.Context, clientID, account string) error
	OfferSigned(ctx context.Context, clientID, account string) (bool, error)
	AddCertificate(ctx context.Context, c Certificate) error
	GetCertificate(ctx context.Context, uuid string) (Certificate, error)
	ListCertificates(ctx context.Context, userID string) ([]Certificate, error)
	// SetCertificateActive sets whether signatures with the certificate
	// (uuid in any case) are taken; ErrNotFound when it is absent.
	SetCertificateActive(ctx context.Context, uuid string, active bool) error
	// SaveTokens stores tokens atomically (an access/refresh pair).
	SaveTokens(ctx context.Context, ts ...Token) error
	GetToken(ctx context.Context, hash string) (Token, error)
	// RevokeToken marks the token revoked at now; ErrNotFound when absent.
	RevokeToken(ctx context.Context, hash string, now time.Time) error
	// RevokeGrant marks revoked at now the token and every token of its
	// chain (the grant: the pairs issued for one code or CLI issue and
	// every refresh of them); ErrNotFound when the token is absent.
	RevokeGrant(ctx context.Context, hash string, now time.Time) error
	// RevokeChain marks revoked at now every token of chain issued to
	// clientID; none there is no error.
	RevokeChain(ctx context.Context, chain, clientID string, now time.Time) error
	// RotateRefresh checks the refresh token old is usable at now, starts
	// its reserve period (if not started) ending reserveUntil, revokes at
	// now every other refresh token of old's chain (the newest one when old
	// is the reserve, the previous reserve when old is the newest), and
	// stores the new tokens in old's chain — all in one transaction, and
	// one rotation of a chain at a time. ErrNotFound when old is unknown or
	// no longer usable.
	RotateRefresh(ctx context.Context, old string, now, reserveUntil time.Time, newTokens ...Token) (Token, error)
	SaveCode(ctx context.Context, c AuthCode) error
	// ConsumeCode returns the code and deletes it so it is used at most
	// once; ErrNotFound when unknown, already used or expired at now.
	ConsumeCode(ctx context.Context, hash string, now time.Time) (AuthCode, error)
	// RedeemCode is ConsumeCode that also stores the tokens issue makes of
	// the code, in the same transaction: a code is never used up by an
	// exchange whose tokens were not stored, so a failed write leaves it
	// for the client's retry. When issue refuses the code (an error), the
	// code is used up all the same and that error returned as it is.
	RedeemCode(ctx context.Context, hash string, now time.Time, issue func(AuthCode) ([]Token, error)) (AuthCode, error)
	// PurgeExpired deletes tokens and codes that can no longer be used at
	// before (expired, revoked, or past their refresh reserve).
	PurgeExpired(ctx context.Context, before time.Time) (int64, error)
	// Seed inserts what is not there yet (by key) in one transaction; the
	// sandbox seed is idempotent through it.
	Seed(ctx context.Context, s SeedData) error
}

// SeedData is a batch of rows Seed inserts when absent.
type SeedData struct {
	Orgs   []Organisation
	Accts  []Account
	Users  []User
	Apps   []PartnerApp
	Offers [][2]string // client_id, account
	Certs  []Certificate
}

// HashSecret is how tokens, codes and client secrets are stored: they are
// high-entropy random strings, so an unsalted sha256 is enough.
func HashSecret(s string) string {
	return hexSHA256(s)
}

// hexSHA256 is the lowercase hex of s's SHA-256 in one allocation (the
// string): hex.EncodeToString would allocate its buffer too, and []byte(s)
// a copy of s (sha256 keeps nothing of its input, so it reads s's bytes in
// place). Every API call hashes its token, and every created document its
// digest.
func hexSHA256(s string) string {
	h := sha256.Sum256(unsafe.Slice(unsafe.StringData(s), len(s)))
	var out [2 * sha256.Size]byte
	hex.Encode(out[:], h[:])
	return string(out[:])
}

// NewUUID returns a random RFC 4122 version-4 UUID.
func NewUUID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// newOpaqueToken is the provider's token form `<uuid>-1` (reference §1).
func newOpaqueToken() string { return NewUUID() + "-1" }

// NewClientSecret returns a 40-character secret of [A-Za-z0-9_-].
func NewClientSecret() string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
	b := make([]byte, ClientSecretSize)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// TokenPair is what the token endpoint and the CLI hand out.
type TokenPair struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	TokenType    string `json:"token_type,omitempty"`
	ExpiresIn    int    `json:"expires_in"`
	Scope        string `json:"scope"`
	IDToken      string `json:"id_token,omitempty"`
}

// Identity is the identity service: it issues and checks tokens. It is the
// Authenticator of the banking transport.
type Identity struct {
	Store IdentityStore
	Now   func() time.Time
	// IDTokens signs id_tokens and user-info JWTs; nil: none are issued
	// and user-info answers plain JSON.
	IDTokens *IDTokenSigner
	// ClientSecretTTL is how long a client secret set through
	// change-client-secret or the CLI lives; 0: secrets never expire.
	ClientSecretTTL time.Duration
	// RefreshReserve is how long a used refresh token keeps working after
	// its first use (reference §3: 2 h at the provider, though one of its
	// FAQ lines says 1 h, so §15 #7 makes it configurable); 0: the used
	// token stops at once and only the newest refresh token works.
	RefreshReserve time.Duration
	// AccessTTL is how long an access token and an id_token live (the
	// provider's hour, AccessTokenTTL, when 0): a team testing its
	// client's refresh sets it short rather than wait the hour out.
	AccessTTL time.Duration

	// LoginFailures keeps the login throttle's failures where every
	// process sees them; nil: in this process only (oauth_login.go).
	LoginFailures LoginFailureStore
	// Gate is the maintenance switch and rate limit of client-info and
	// the crypto info, the API's one Gate (nil: off). The OAuth endpoints
	// do not pass it: the bank's identity server answers them, not the
	// API whose maintenance the switch stands for, and a partner must
	// still get and refresh the tokens it will need when the API is back.
	Gate *Gate

	failures loginFailures // oauth_login.go
	// checkPassword is CheckPassword unless a test watches the calls.
	checkPassword func(hash, password string) bool
}

// NewIdentity returns the identity service over store.
func NewIdentity(store IdentityStore) *Identity {
	return &Identity{Store: store, Now: time.Now, ClientSecretTTL: ClientSecretLifetime, RefreshReserve: RefreshReserve}
}

func (id *Identity) now() time.Time {
	if id.Now == nil {
		return time.Now()
	}
	return id.Now()
}

func (id *Identity) accessTTL() time.Duration {
	if id.AccessTTL <= 0 {
		return AccessTokenTTL
	}
	return id.AccessTTL
}

// Authenticate resolves an access token. Everything but a live access
// token is 401 UNAUTHORIZED with the same message, so a caller cannot
// probe which tokens exist.
func (id *Identity) Authenticate(ctx context.Context, token string) (Principal, error) {
	// Built only on refusal: formatted on every request, it was about a
	// third of authenticating a cached token.
	unauth := func() error {
		return Errorf(KindUnauthorized, "Токен доступа недействителен или истёк")
	}
	if token == "" {
		return Principal{}, unauth()
	}
	t, err := id.Store.GetToken(ctx, HashSecret(token))
	if errors.Is(err, ErrNotFound) {
		return Principal{}, unauth()
	}
	if err != nil {
		return Principal{}, fmt.Errorf("authenticate: %w", err)
	}
	if t.Kind != TokenAccess || !t.usableAt(id.now()) {
		return Principal{}, unauth()
	}
	return Principal{OrgID: t.OrgID, UserID: t.UserID, PartnerID: t.ClientID, Scopes: t.Scopes}, nil
}

// Purge deletes tokens and codes that no longer authenticate anything, so
// the tables hold live credentials only.
func (id *Identity) Purge(ctx context.Context) (int64, error) {
	return id.Store.PurgeExpired(ctx, id.now())
}

// ParseScopes splits a space-separated scope string, dropping repeats.
func ParseScopes(s string) []string {
	var out []string
	for _, f := range strings.Fields(s) {
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// IssueTokens stores and returns a new access/refresh pair for a user of
// an organisation through a partner app.
func (id *Identity) IssueTokens(ctx context.Context, clientID, orgID, userID string, scopes []string) (TokenPair, error) {
	pair, toks := id.newPair(NewUUID(), clientID, orgID, userID, scopes)
	if err := id.Store.SaveTokens(ctx, toks...); err != nil {
		return TokenPair{}, fmt.Errorf("issue tokens: %w", err)
	}
	return pair, nil
}

// newPair makes an access/refresh pair in chain; the store puts a
// refreshed pair in the used token's chain whatever chain says.
func (id *Identity) newPair(chain, clientID, orgID, userID string, scopes []string) (TokenPair, []Token) {
	now := id.now()
	access, refresh := newOpaqueToken(), newOpaqueToken()
	base := Token{ClientID: clientID, OrgID: orgID, UserID: userID, Scopes: scopes, Chain: chain}
	a, r := base, base
	ttl := id.accessTTL()
	a.Hash, a.Kind, a.ExpiresAt = HashSecret(access), TokenAccess, now.Add(ttl)
	r.Hash, r.Kind, r.ExpiresAt = HashSecret(refresh), TokenRefresh, now.Add(RefreshTokenTTL)
	return TokenPair{AccessToken: access, RefreshToken: refresh, TokenType: "Bearer",
		ExpiresIn: int(ttl / time.Second), Scope: strings.Join(scopes, " ")}, []Token{a, r}
}

// Refresh exchanges a refresh token of clientID for a new pair with the
// same grant, with an id_token when the grant has openid. The used token stays valid for id.RefreshReserve as the chain's
// one reserve; every other refresh token of its chain stops working, so
// after any sequence of refreshes exactly the newest token and at most one
// reserve can refresh (reference §3).
//
// scope is the request's scope parameter, "" when it has none (RFC 6749
// §6): the new access token gets those scopes alone, in the grant's
// order, and the new refresh token the whole grant, as §6 asks of it; a
// scope outside the grant is invalid_scope, refused before the used token
// is touched.
func (id *Identity) Refresh(ctx context.Context, clientID, refresh, scope string) (TokenPair, error) {
	now := id.now()
	old, err := id.Store.GetToken(ctx, HashSecret(refresh))
	if errors.Is(err, ErrNotFound) || (err == nil && (old.Kind != TokenRefresh || old.ClientID != clientID || !old.usableAt(now))) {
		return TokenPair{}, ErrInvalidGrant("Unknown refresh token")
	}
	if err != nil {
		return TokenPair{}, err
	}
	granted := old.Scopes
	if asked := ParseScopes(scope); len(asked) > 0 {
		var beyond []string
		for _, s := range asked {
			if !slices.Contains(old.Scopes, s) {
				beyond = append(beyond, s)
			}
		}
		if len(beyond) > 0 {
			return TokenPair{}, oauthErr("invalid_scope", "scope beyond the grant: %s", strings.Join(beyond, " "))
		}
		granted = slices.DeleteFunc(slices.Clone(old.Scopes), func(s string) bool { return !slices.Contains(asked, s) })
	}
	pair, toks := id.newPair(old.Chain, old.ClientID, old.OrgID, old.UserID, old.Scopes)
	for i := range toks {
		if toks[i].Kind == TokenAccess {
			toks[i].Scopes = granted
		}
	}
	pair.Scope = strings.Join(granted, " ")
	if _, err := id.Store.RotateRefresh(ctx, HashSecret(refresh), now, now.Add(max(id.RefreshReserve, 0)), toks...); err != nil {
		if errors.Is(err, ErrNotFound) {
			return TokenPair{}, ErrInvalidGrant("Unknown refresh token")
		}
		return TokenPair{}, err
	}
	// The refresh answer has the shape of the code's (reference §3's one
	// token response, id_token included), so a client that reads the
	// id_token of every answer finds one; OIDC Core §12.2 fixes its
	// claims: the same iss, sub and aud, a new iat, and no nonce.
	pair.IDToken, err = id.idToken(old.ClientID, old.UserID, granted, "", time.Time{}, now)
	return pair, err
}
