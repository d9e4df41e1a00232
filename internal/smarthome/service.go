package smarthome

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Credential kinds: agents read the catalog, admins change it.
const (
	KindAgent = "agent"
	KindAdmin = "admin"
)

// Stamp is the pair of counters a store bumps on every change: Catalog on
// every catalog write (ETags derive from it), Credentials whenever a
// credential is created, replaced or deleted.
type Stamp struct {
	Catalog     int64
	Credentials int64
}

// Store keeps the catalog and the credentials. Every write is one
// transaction; every catalog change bumps the catalog version and every
// credential change bumps the credentials counter.
type Store interface {
	// Seed stores c as version 1 unless a catalog is already stored; it
	// reports whether it wrote anything.
	Seed(ctx context.Context, c *Catalog) (bool, error)
	// Version is the current catalog version (ErrNotFound before Seed).
	Version(ctx context.Context) (int64, error)
	// Stamp reads both change counters in one query (ErrNotFound before
	// Seed).
	Stamp(ctx context.Context) (Stamp, error)
	// Load reads the whole catalog at its current version.
	Load(ctx context.Context) (*Catalog, error)
	// PutModel creates or replaces a model; it returns whether it was new and
	// the new catalog version.
	PutModel(ctx context.Context, m Model) (created bool, version int64, err error)
	// DeleteModel removes a model (ErrNotFound if absent).
	DeleteModel(ctx context.Context, id string) (version int64, err error)
	// CreateCredential stores a login's secret hash (ErrDuplicate if taken).
	CreateCredential(ctx context.Context, kind, login, secretHash string) error
	// ReplaceCredential changes an existing login's secret hash (ErrNotFound
	// if absent).
	ReplaceCredential(ctx context.Context, kind, login, secretHash string) error
	// DeleteCredential removes a login (ErrNotFound if absent).
	DeleteCredential(ctx context.Context, kind, login string) error
	// CredentialHash returns a login's secret hash (ErrNotFound if absent).
	CredentialHash(ctx context.Context, kind, login string) (string, error)
	// Logins lists every login of a kind.
	Logins(ctx context.Context, kind string) ([]string, error)
}

// DefaultRecheck is how often a Service asks the store whether the catalog
// or the credentials changed. Twice it bounds how long a change made by
// another process (the CLI, a second server on the same database) stays
// unseen; changes made through the Service itself are seen by the very next
// call.
const DefaultRecheck = 50 * time.Millisecond

// Service is the smart-home domain over a Store.
//
// Agents poll the catalog and authenticate on every request, so the Service
// answers both from memory: the decoded catalog is an immutable snapshot
// behind an atomic pointer, and verified credentials are remembered by a
// hash of what the agent sent. Both are checked against the store's Stamp
// at most every Recheck, and dropped at once when this Service itself
// writes.
type Service struct {
	store Store
	// recheck and now are fixed at construction. With the real clock a
	// timer marks each snapshot stale after recheck, so a request reads no
	// clock; a test clock (SetClock) is compared on every call instead.
	recheck   time.Duration
	now       func() time.Duration
	testClock bool

	snap atomic.Pointer[snapshot]
	// writes counts this Service's own writes; a snapshot taken before the
	// latest one is never served.
	writes  atomic.Int64
	refresh sync.Mutex

	verified verifiedCache
	// agents is the set of agent logins (AgentRegistered), read again when
	// the credentials counter moves; agentsLoad lets one caller read it.
	agents     atomic.Pointer[agentSet]
	agentsLoad sync.Mutex
	// hide are the categories the profile leaves out (Restrict).
	hide []string
	// ranges replace features' default ranges (SetRanges).
	ranges Ranges
	// opaque are the agents' opaque credentials (SetOpaqueCredentials).
	opaque []OpaqueCredential
}

// Restrict makes the Service serve the catalog without the given
// categories (a profile, reference §6.1 and #13) to every caller: the
// information API, validation, the MQTT gate and model administration
// then know only the profile's categories, so a model of another is
// refused like one of an unknown category. Models already stored under a
// hidden category stay the store's: StoredModels lists them, so that an
// administrator sees what DeleteModel can remove, as the command line does.
// Call it before the Service is first used.
func (s *Service) Restrict(hide []string) { s.hide = hide }

// SetRanges makes the Service hand every caller the catalog with r's
// ranges in place of its features' defaults (Catalog WithRanges), so that
// validation, the MQTT gate and model administration all judge values by
// them. Check r with CheckRanges first; call it before the Service is
// first used.
func (s *Service) SetRanges(r Ranges) { s.ranges = r }

// snapshot is the catalog as of one check of the store.
type snapshot struct {
	catalog *Catalog
	// stored are every model of the store, those of categories the profile
	// hides included (StoredModels).
	stored  []Model
	stamp   Stamp
	checked time.Duration // on the Service's clock
	writes  int64         // Service.writes when the check began
	stale   atomic.Bool   // set by a timer recheck after checked
}

// fresh reports whether snap is within the recheck bound, and the time to
// judge cached credentials by: with the real clock the time of the check,
// which is at most recheck old.
func (s *Service) fresh(snap *snapshot) (bool, time.Duration) {
	if !s.testClock {
		return !snap.stale.Load(), snap.checked
	}
	now := s.now()
	return now-snap.checked < s.recheck, now
}

// NewService builds the service with DefaultRecheck.
func NewService(s Store) *Service { return NewServiceRecheck(s, DefaultRecheck) }

// NewServiceRecheck builds the service with its own bound on how long
// another process's change may stay unseen.
func NewServiceRecheck(s Store, recheck time.Duration) *Service {
	start := time.Now()
	svc := &Service{store: s, recheck: recheck, now: func() time.Duration { return time.Since(start) }}
	svc.verified.init()
	return svc
}

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
	snap, _, err := s.current(ctx)
	if err != nil {
		return nil, err
	}
	return snap.catalog, nil
}

// StoredModels returns the catalog's version and every model the store
// holds, those of a category the profile hides included: the
// administrator's view, in which a model is found by the same GET that
// DELETE can remove it with, and which matches `smarthome model list`.
// Callers must not modify the slice.
func (s *Service) StoredModels(ctx context.Context) (int64, []Model, error) {
	snap, _, err := s.current(ctx)
	if err != nil {
		return 0, nil, err
	}
	return snap.catalog.Version, snap.stored, nil
}

// current returns a snapshot no older than the recheck bound and no older
// than this Service's last write, and the time to judge cached credentials
// by.
func (s *Service) current(ctx context.Context) (*snapshot, time.Duration, error) {
	snap := s.snap.Load()
	if snap != nil && snap.writes == s.writes.Load() {
		if ok, now := s.fresh(snap); ok {
			return snap, now, nil
		}
		// Expired by time only. If another request is already asking the
		// store, a snapshot that has just expired is served meanwhile
		// instead of queueing behind it; an older one (the first requests
		// after a quiet spell) waits for the answer. This rare path may read
		// the clock.
		if !s.refresh.TryLock() {
			if now := s.now(); now-snap.checked < 2*s.recheck {
				return snap, now, nil
			}
			s.refresh.Lock()
		}
	} else {
		s.refresh.Lock()
	}
	defer s.refresh.Unlock()
	// Another goroutine may have refreshed while this one waited.
	writes := s.writes.Load()
	if snap = s.snap.Load(); snap != nil && snap.writes == writes {
		if ok, now := s.fresh(snap); ok {
			return snap, now, nil
		}
	}
	now := s.now()
	st, err := s.store.Stamp(ctx)
	if err != nil {
		return nil, now, err
	}
	next := &snapshot{stamp: st, checked: now, writes: writes}
	if snap != nil && snap.stamp.Catalog == st.Catalog {
		next.catalog, next.stored = snap.catalog, snap.stored
	} else {
		c, err := s.store.Load(ctx)
		if err != nil {
			return nil, now, err
		}
		if err := c.adoptAccess(); err != nil {
			return nil, now, err
		}
		next.catalog = c.Without(s.hide).WithRanges(s.ranges)
		next.stored = c.Models
		// Load may see a newer version than the stamp; the stamp keeps the
		// catalog's own so the next check compares like with like.
		next.stamp.Catalog = c.Version
	}
	if snap == nil || snap.stamp.Credentials != st.Credentials {
		s.verified.clear()
	}
	s.snap.Store(next)
	if !s.testClock {
		time.AfterFunc(s.recheck, func() { next.stale.Store(true) })
	}
	return next, now, nil
}

// wrote marks the cached catalog and credentials as out of date after this
// Service changed the store.
func (s *Service) wrote() { s.writes.Add(1) }

// PutModel validates a model against the current catalog and stores it.
func (s *Service) PutModel(ctx context.Context, m Model) (bool, int64, error) {
	c, err := s.Catalog(ctx)
	if err != nil {
		return false, 0, err
	}
	if d := c.CheckModel(&m); len(d) > 0 {
		return false, 0, &InvalidError{Details: d}
	}
	created, v, err := s.store.PutModel(ctx, m)
	s.wrote()
	return created, v, err
}

// DeleteModel removes a model.
func (s *Service) DeleteModel(ctx context.Context, id string) (int64, error) {
	v, err := s.store.DeleteModel(ctx, id)
	s.wrote()
	return v, err
}
