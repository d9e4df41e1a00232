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
)

// Credential kinds: agents read the catalog, admins change it.
const (
	KindAgent = "agent"
	KindAdmin = "admin"
)

// Store keeps the catalog and the credentials. Every write is one
// transaction; every catalog change bumps the catalog version.
type Store interface {
	// Seed stores c as version 1 unless a catalog is already stored; it
	// reports whether it wrote anything.
	Seed(ctx context.Context, c *Catalog) (bool, error)
	// Version is the current catalog version (ErrNotFound before Seed).
	Version(ctx context.Context) (int64, error)
	// Load reads the whole catalog at its current version.
	Load(ctx context.Context) (*Catalog, error)
	// PutModel creates or replaces a model; it returns whether it was new and
	// the new catalog version.
	PutModel(ctx context.Context, m Model) (created bool, version int64, err error)
	// DeleteModel removes a model (ErrNotFound if absent).
	DeleteModel(ctx context.Context, id string) (version int64, err error)
	// CreateCredential stores a login's secret hash (ErrDuplicate if taken).
	CreateCredential(ctx context.Context, kind, login, secretHash string) error
	// CredentialHash returns a login's secret hash (ErrNotFound if absent).
	CredentialHash(ctx context.Context, kind, login string) (string, error)
}

// Service is the smart-home domain over a Store. It caches the decoded
// catalog per version, so reads cost one version lookup.
type Service struct {
	store Store
	mu    sync.Mutex
	cur   *Catalog
	// hashes caches stored credential hashes: they never change once
	// issued, and agents authenticate on every poll.
	hashes map[string]cachedHash
}

type cachedHash struct {
	hash    string
	fetched time.Time
}

// hashTTL bounds how long a cached credential hash is trusted.
const hashTTL = time.Minute

// NewService builds the service.
func NewService(s Store) *Service { return &Service{store: s, hashes: map[string]cachedHash{}} }

// Init seeds the store from the built-in catalog on first start.
func (s *Service) Init(ctx context.Context) error {
	c, err := Seed()
	if err != nil {
		return err
	}
	_, err = s.store.Seed(ctx, c)
	return err
}

// Catalog returns the current catalog; callers must not modify it.
func (s *Service) Catalog(ctx context.Context) (*Catalog, error) {
	v, err := s.store.Version(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	cur := s.cur
	s.mu.Unlock()
	if cur != nil && cur.Version == v {
		return cur, nil
	}
	c, err := s.store.Load(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.cur == nil || c.Version >= s.cur.Version {
		s.cur = c
	}
	s.mu.Unlock()
	return c, nil
}

// PutModel validates a model against the current catalog and stores it.
func (s *Service) PutModel(ctx context.Context, m Model) (bool, int64, error) {
	c, err := s.Catalog(ctx)
	if err != nil {
		return false, 0, err
	}
	if d := c.CheckModel(&m); len(d) > 0 {
		return false, 0, &InvalidError{Details: d}
	}
	return s.store.PutModel(ctx, m)
}

// DeleteModel removes a model.
func (s *Service) DeleteModel(ctx context.Context, id string) (int64, error) {
	return s.store.DeleteModel(ctx, id)
}

var loginPattern = regexp.MustCompile(`^[A-Za-z0-9._@-]{1,128}$`)

// CreateCredential issues a random password for a new login and stores only
// its hash. The password has 192 random bits, so a plain SHA-256 is as good
// as a slow hash and keeps per-request authentication cheap.
func (s *Service) CreateCredential(ctx context.Context, kind, login string) (string, error) {
	if !loginPattern.MatchString(login) {
		return "", &InvalidError{Details: []string{"login must be 1-128 of A-Z a-z 0-9 . _ @ -"}}
	}
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	pw := base64.RawURLEncoding.EncodeToString(b[:])
	if err := s.store.CreateCredential(ctx, kind, login, hashSecret(pw)); err != nil {
		return "", fmt.Errorf("%s %s: %w", kind, login, err)
	}
	return pw, nil
}

// Authenticate checks a login and password; any mismatch is ErrUnauthorized.
func (s *Service) Authenticate(ctx context.Context, kind, login, password string) error {
	h, err := s.credentialHash(ctx, kind, login)
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
	return nil
}

func (s *Service) credentialHash(ctx context.Context, kind, login string) (string, error) {
	key := kind + "\x00" + login
	s.mu.Lock()
	c, ok := s.hashes[key]
	s.mu.Unlock()
	if ok && time.Since(c.fetched) < hashTTL {
		return c.hash, nil
	}
	h, err := s.store.CredentialHash(ctx, kind, login)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	if len(s.hashes) > 10000 { // bound memory against many distinct logins
		clear(s.hashes)
	}
	s.hashes[key] = cachedHash{hash: h, fetched: time.Now()}
	s.mu.Unlock()
	return h, nil
}

func hashSecret(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}
