package smarthome

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"time"

	"partnerapi/internal/basicauth"
)

// VerifiedTTL bounds how long a verified credential is trusted without
// asking the store again, even if no change counter moved (a row edited by
// hand). Changes made through any Service are seen much sooner: at once in
// the Service that made them, within twice DefaultRecheck in every other one.
const VerifiedTTL = time.Minute

// verifiedCacheMax bounds the memory of the verified-credentials cache; past
// it the cache starts over (agents re-verify once).
const verifiedCacheMax = 10000

// verifiedCache remembers credentials that passed verification, keyed by a
// SHA-256 of the kind and the Authorization header an agent sent — never
// the password itself. Only successes are remembered, so a new credential works
// at once and a wrong password always reaches the store.
type verifiedCache struct {
	mu      sync.RWMutex
	entries map[[sha256.Size]byte]time.Duration // key → expiry on the Service clock
	// gen counts clears; a verification that began before a clear must not
	// put its (possibly revoked) result back.
	gen uint64
}

func (c *verifiedCache) init() { c.entries = map[[sha256.Size]byte]time.Duration{} }

func (c *verifiedCache) clear() {
	c.mu.Lock()
	clear(c.entries)
	c.gen++
	c.mu.Unlock()
}

func (c *verifiedCache) valid(key *[sha256.Size]byte, now time.Duration) (bool, uint64) {
	c.mu.RLock()
	exp, ok := c.entries[*key]
	gen := c.gen
	c.mu.RUnlock()
	return ok && now < exp, gen
}

func (c *verifiedCache) put(key *[sha256.Size]byte, exp time.Duration, gen uint64) {
	c.mu.Lock()
	if c.gen == gen {
		if len(c.entries) >= verifiedCacheMax {
			clear(c.entries)
		}
		c.entries[*key] = exp
	}
	c.mu.Unlock()
}

// credentialKey hashes kind and the Authorization header an agent sent
// into the cache key. Typical headers fit a stack buffer, so a cache hit
// allocates nothing.
func credentialKey(kind, authorization string) [sha256.Size]byte {
	var buf [256]byte
	b := buf[:0]
	if len(kind)+1+len(authorization) > len(buf) {
		b = make([]byte, 0, len(kind)+1+len(authorization))
	}
	b = append(b, kind...)
	b = append(b, 0)
	b = append(b, authorization...)
	return sha256.Sum256(b)
}

var loginPattern = regexp.MustCompile(`^[A-Za-z0-9._@-]{1,128}$`)

// passwordPattern is what a chosen password must match: what newPassword
// makes (32 characters of base64url) up to 128 of them.
var passwordPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{32,128}$`)

// ChosenPasswordValid reports whether pw may be a credential's chosen
// password (CreateCredentialWith refuses any other).
func ChosenPasswordValid(pw string) bool { return passwordPattern.MatchString(pw) }

// ValidLogin reports whether login has the syntax every agent and admin
// login has (CreateCredential refuses any other).
func ValidLogin(login string) bool { return loginPattern.MatchString(login) }

// newPassword returns 192 random bits, so a plain SHA-256 of it is as good
// as a slow hash and keeps verification cheap.
func newPassword() (string, error) {
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// CreateCredential issues a random password for a new login and stores only
// its hash.
func (s *Service) CreateCredential(ctx context.Context, kind, login string) (string, error) {
	pw, err := newPassword()
	if err != nil {
		return "", err
	}
	return s.CreateCredentialWith(ctx, kind, login, pw)
}

// CreateCredentialWith stores a new login with the password its caller chose
// (a team's CI configuration holds its agent's credentials, so the agent it
// creates on a fresh server must have them), only its hash. The password is
// 32-128 characters of [A-Za-z0-9_-], as a generated one is: the hash is a
// plain SHA-256, which only the password's length keeps from a guesser.
func (s *Service) CreateCredentialWith(ctx context.Context, kind, login, pw string) (string, error) {
	if !loginPattern.MatchString(login) {
		return "", &InvalidError{Details: []string{"login must be 1-128 of A-Z a-z 0-9 . _ @ -"}}
	}
	if !ChosenPasswordValid(pw) {
		return "", &InvalidError{Details: []string{"password must be 32-128 of A-Z a-z 0-9 _ -"}}
	}
	if err := s.store.CreateCredential(ctx, kind, login, hashSecret(pw)); err != nil {
		if errors.Is(err, ErrDuplicate) {
			// Worded as the admin API's 404 for a login it does not
			// have ("agent 'x' does not exist"), since it is the 409's
			// detail; the login matched loginPattern, so it needs no
			// escaping between the quotes.
			return "", fmt.Errorf("%s '%s' %w", kind, login, err)
		}
		return "", fmt.Errorf("%s %s: %w", kind, login, err)
	}
	s.wrote()
	return pw, nil
}

// RotateCredential gives an existing login a new random password; the old
// one stops working at once in this Service and within twice DefaultRecheck in
// every other one.
func (s *Service) RotateCredential(ctx context.Context, kind, login string) (string, error) {
	pw, err := newPassword()
	if err != nil {
		return "", err
	}
	err = s.store.ReplaceCredential(ctx, kind, login, hashSecret(pw))
	s.revoked()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", kind, login, err)
	}
	return pw, nil
}

// DeleteCredential removes a login; it is refused from the next request on
// in this Service and within twice DefaultRecheck in every other one.
func (s *Service) DeleteCredential(ctx context.Context, kind, login string) error {
	err := s.store.DeleteCredential(ctx, kind, login)
	s.revoked()
	if err != nil {
		return fmt.Errorf("%s %s: %w", kind, login, err)
	}
	return nil
}

// revoked forgets every verified credential after this Service changed one.
func (s *Service) revoked() {
	s.verified.clear()
	s.wrote()
}

// Authenticate checks a login and password; any mismatch is ErrUnauthorized.
func (s *Service) Authenticate(ctx context.Context, kind, login, password string) error {
	return s.AuthenticateBasic(ctx, kind, "Basic "+base64.StdEncoding.EncodeToString([]byte(login+":"+password)))
}

// AuthenticateBasic checks an Authorization header value, Basic with
// Base64 "login:password" under the rules of http.Request.BasicAuth or,
// for agents, Basic with one of the opaque credentials
// (SetOpaqueCredentials); any mismatch is ErrUnauthorized. A header verified within the recheck bound
// costs one SHA-256 of the header and a map lookup: it is not even decoded.
func (s *Service) AuthenticateBasic(ctx context.Context, kind, authorization string) error {
	// The snapshot check is what notices credential changes made by other
	// processes, so it runs before the cache is trusted.
	_, now, err := s.current(ctx)
	if err != nil {
		return err
	}
	key := credentialKey(kind, authorization)
	ok, gen := s.verified.valid(&key, now)
	if ok {
		return nil
	}
	if kind == KindAgent {
		// Not cached: its check is a hash and a set lookup already, and
		// it must end with the agent's credential.
		if ok, err := s.authenticateOpaque(ctx, authorization); ok || err != nil {
			return err
		}
	}
	login, password, ok := basicauth.Parse(authorization)
	if !ok {
		return ErrUnauthorized
	}
	h, err := s.store.CredentialHash(ctx, kind, login)
	if errors.Is(err, ErrNotFound) {
		// Compare anyway so an unknown login costs what a wrong password does.
		subtle.ConstantTimeCompare([]byte(hashSecret(password)), []byte(hashSecret("")))
		return ErrUnauthorized
	}
	if err != nil {
		return err
	}
	if subtle.ConstantTimeCompare([]byte(hashSecret(password)), []byte(h)) != 1 {
		return ErrUnauthorized
	}
	s.verified.put(&key, now+VerifiedTTL, gen)
	return nil
}

func hashSecret(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}
