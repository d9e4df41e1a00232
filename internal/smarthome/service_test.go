package smarthome_test

import (
	"context"
	"encoding/base64"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"partnerapi/internal/smarthome"
	"partnerapi/internal/smarthome/homesql"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// fakeClock is a Service clock that only moves when told.
type fakeClock struct{ t atomic.Int64 }

func (c *fakeClock) now() time.Duration      { return time.Duration(c.t.Load()) }
func (c *fakeClock) advance(d time.Duration) { c.t.Add(int64(d)) }

// countingStore counts the queries the Service's caches are meant to save.
type countingStore struct {
	smarthome.Store
	stamps, hashes, loads, logins atomic.Int64
}

func (s *countingStore) Logins(ctx context.Context, kind string) ([]string, error) {
	s.logins.Add(1)
	return s.Store.Logins(ctx, kind)
}

func (s *countingStore) Stamp(ctx context.Context) (smarthome.Stamp, error) {
	s.stamps.Add(1)
	return s.Store.Stamp(ctx)
}

func (s *countingStore) CredentialHash(ctx context.Context, kind, login string) (string, error) {
	s.hashes.Add(1)
	return s.Store.CredentialHash(ctx, kind, login)
}

func (s *countingStore) Load(ctx context.Context) (*smarthome.Catalog, error) {
	s.loads.Add(1)
	return s.Store.Load(ctx)
}

const recheck = time.Second

// twoServers is a server Service with a fake clock and a second Service on
// the same database, standing for the CLI or another server process.
func twoServers(t *testing.T, db *sqldb.DB) (*smarthome.Service, *countingStore, *fakeClock, *smarthome.Service) {
	t.Helper()
	store := &countingStore{Store: homesql.New(db)}
	srv := smarthome.NewServiceRecheck(store, recheck)
	clock := &fakeClock{}
	srv.SetClock(clock.now)
	if err := srv.Init(context.Background()); err != nil {
		t.Fatal(err)
	}
	return srv, store, clock, smarthome.NewService(homesql.New(db))
}

func hasModel(t *testing.T, s *smarthome.Service, id string) bool {
	t.Helper()
	c, err := s.Catalog(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range c.Models {
		if m.ID == id {
			return true
		}
	}
	return false
}

func TestCatalogCache(t *testing.T) {
	storetest.Each(t, homesql.Migrate, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		srv, store, clock, other := twoServers(t, db)
		m := smarthome.Model{ID: "k1", Manufacturer: "A", Model: "B", Category: "kettle", Features: []string{"online", "on_off"}}

		c1, err := srv.Catalog(ctx)
		if err != nil {
			t.Fatal(err)
		}
		stamps := store.stamps.Load()
		for range 100 {
			if c, _ := srv.Catalog(ctx); c != c1 {
				t.Fatal("an unchanged catalog was not served from the snapshot")
			}
		}
		if n := store.stamps.Load() - stamps; n != 0 {
			t.Errorf("%d store checks within the recheck bound, want 0", n)
		}

		// A write through this Service is visible to the very next read.
		if _, _, err := srv.PutModel(ctx, m); err != nil {
			t.Fatal(err)
		}
		if !hasModel(t, srv, "k1") {
			t.Fatal("own write not visible at once")
		}

		// Another process's write shows once the recheck bound has passed,
		// and the catalog is reloaded only when its version moved.
		if _, err := other.DeleteModel(ctx, "k1"); err != nil {
			t.Fatal(err)
		}
		if !hasModel(t, srv, "k1") {
			t.Fatal("the snapshot was rechecked before the bound")
		}
		clock.advance(recheck)
		if hasModel(t, srv, "k1") {
			t.Fatal("another process's delete not visible after the recheck bound")
		}
		loads := store.loads.Load()
		clock.advance(recheck)
		if _, err := srv.Catalog(ctx); err != nil || store.loads.Load() != loads {
			t.Errorf("unchanged version reloaded the catalog (%d loads, %v)", store.loads.Load()-loads, err)
		}
	})
}

func TestVerifiedCredentialCache(t *testing.T) {
	storetest.Each(t, homesql.Migrate, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		srv, store, clock, other := twoServers(t, db)
		auth := func(login, pw string) error { return srv.Authenticate(ctx, smarthome.KindAgent, login, pw) }

		// A credential another process just created works at once: only
		// successes are cached.
		if err := auth("a1", "x"); !errors.Is(err, smarthome.ErrUnauthorized) {
			t.Fatalf("unknown login: %v", err)
		}
		pw, err := other.CreateCredential(ctx, smarthome.KindAgent, "a1")
		if err != nil {
			t.Fatal(err)
		}
		if err := auth("a1", pw); err != nil {
			t.Fatalf("new credential refused: %v", err)
		}
		hashes := store.hashes.Load()
		for range 50 {
			if err := auth("a1", pw); err != nil {
				t.Fatal(err)
			}
		}
		if n := store.hashes.Load() - hashes; n != 0 {
			t.Errorf("%d hash lookups for a verified credential, want 0", n)
		}
		// Wrong passwords and the other kind are never answered from the cache.
		for _, tc := range []struct{ kind, login, pw string }{
			{smarthome.KindAgent, "a1", pw + "x"}, {smarthome.KindAgent, "a1", ""}, {smarthome.KindAdmin, "a1", pw},
		} {
			if err := srv.Authenticate(ctx, tc.kind, tc.login, tc.pw); !errors.Is(err, smarthome.ErrUnauthorized) {
				t.Errorf("%s %s %q: %v", tc.kind, tc.login, tc.pw, err)
			}
		}
		// The header's own forms, as http.Request.BasicAuth reads them.
		b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
		for _, tc := range []struct {
			header string
			ok     bool
		}{
			{"Basic " + b64("a1:"+pw), true},
			{"basic " + b64("a1:"+pw), true},
			{"BASIC " + b64("a1:"+pw), true},
			{"Basic " + b64("a1"+pw), false},
			{"Basic " + b64("a1:" + pw)[1:], false},
			{"Bearer " + b64("a1:"+pw), false},
			{b64("a1:" + pw), false},
			{"", false},
		} {
			err := srv.AuthenticateBasic(ctx, smarthome.KindAgent, tc.header)
			if (err == nil) != tc.ok || (err != nil && !errors.Is(err, smarthome.ErrUnauthorized)) {
				t.Errorf("%q: %v, want ok=%v", tc.header, err, tc.ok)
			}
		}

		// Rotation through this Service: the old password is refused at once.
		pw2, err := srv.RotateCredential(ctx, smarthome.KindAgent, "a1")
		if err != nil {
			t.Fatal(err)
		}
		if err := auth("a1", pw); !errors.Is(err, smarthome.ErrUnauthorized) {
			t.Fatalf("old password after rotation: %v", err)
		}
		if err := auth("a1", pw2); err != nil {
			t.Fatalf("new password after rotation: %v", err)
		}

		// Rotation and deletion by another process: refused once the
		// recheck bound has passed.
		pw3, err := other.RotateCredential(ctx, smarthome.KindAgent, "a1")
		if err != nil {
			t.Fatal(err)
		}
		clock.advance(recheck)
		if err := auth("a1", pw2); !errors.Is(err, smarthome.ErrUnauthorized) {
			t.Fatalf("password rotated elsewhere still accepted after the bound: %v", err)
		}
		if err := auth("a1", pw3); err != nil {
			t.Fatal(err)
		}
		if err := other.DeleteCredential(ctx, smarthome.KindAgent, "a1"); err != nil {
			t.Fatal(err)
		}
		clock.advance(recheck)
		if err := auth("a1", pw3); !errors.Is(err, smarthome.ErrUnauthorized) {
			t.Fatalf("deleted agent accepted after the bound: %v", err)
		}
		if err := other.DeleteCredential(ctx, smarthome.KindAgent, "a1"); !errors.Is(err, smarthome.ErrNotFound) {
			t.Errorf("deleting twice: %v", err)
		}
		if _, err := srv.RotateCredential(ctx, smarthome.KindAgent, "ghost"); !errors.Is(err, smarthome.ErrNotFound) {
			t.Errorf("rotating an unknown login: %v", err)
		}

		// Even with no counter moving, a verified credential is asked for
		// again after VerifiedTTL.
		pw4, err := srv.CreateCredential(ctx, smarthome.KindAgent, "a2")
		if err != nil {
			t.Fatal(err)
		}
		if err := auth("a2", pw4); err != nil {
			t.Fatal(err)
		}
		hashes = store.hashes.Load()
		clock.advance(smarthome.VerifiedTTL)
		if err := auth("a2", pw4); err != nil || store.hashes.Load() != hashes+1 {
			t.Errorf("after the TTL: %v, %d lookups", err, store.hashes.Load()-hashes)
		}
	})
}

// TestRecheckTimer runs the Service on the real clock, where a timer, not
// a clock read per request, ends a snapshot's life.
func TestRecheckTimer(t *testing.T) {
	ctx := context.Background()
	db := storetest.SQLite(t)
	if err := homesql.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	other := smarthome.NewService(homesql.New(db))
	if err := other.Init(ctx); err != nil {
		t.Fatal(err)
	}
	// Within the bound the store is not asked again.
	slow := &countingStore{Store: homesql.New(db)}
	idle := smarthome.NewServiceRecheck(slow, time.Hour)
	for range 100 {
		if _, err := idle.Catalog(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := slow.stamps.Load(); n != 1 {
		t.Errorf("%d store checks within the bound, want 1", n)
	}
	// Past the bound another process's change shows.
	srv := smarthome.NewServiceRecheck(homesql.New(db), 20*time.Millisecond)
	if !hasModel(t, srv, "QWERTY124") {
		t.Fatal("seed model missing")
	}
	if _, err := other.DeleteModel(ctx, "QWERTY124"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for hasModel(t, srv, "QWERTY124") {
		if time.Now().After(deadline) {
			t.Fatal("another process's delete never became visible")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// legacyStore loads catalogs as a store seeded before features carried
// their access does: without it.
type legacyStore struct{ smarthome.Store }

func (s legacyStore) Load(ctx context.Context) (*smarthome.Catalog, error) {
	c, err := s.Store.Load(ctx)
	if err == nil {
		for _, f := range c.Features {
			f.Access = ""
		}
	}
	return c, err
}

// A catalog stored without access serves the built-in catalog's, so the
// command checks that depend on it hold on an old database too.
func TestServiceAdoptsAccess(t *testing.T) {
	storetest.Each(t, homesql.Migrate, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		svc := smarthome.NewService(legacyStore{homesql.New(db)})
		if err := svc.Init(ctx); err != nil {
			t.Fatal(err)
		}
		c, err := svc.Catalog(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for name, want := range map[string]string{"unlock": "w", "online": "r", "on_off": "rw", "pir": "event", "alarm_mute": "rw?"} {
			if got := c.Features[name].Access; got != want {
				t.Errorf("%s: access %q, want %q", name, got, want)
			}
		}
	})
}

// A restricted Service (a profile) hands every caller the profile's
// catalog: a model of a hidden category is refused as invalid.
func TestServiceRestrict(t *testing.T) {
	storetest.Each(t, homesql.Migrate, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		svc := smarthome.NewService(homesql.New(db))
		svc.Restrict([]string{"sensor_air"})
		if err := svc.Init(ctx); err != nil {
			t.Fatal(err)
		}
		c, err := svc.Catalog(ctx)
		if err != nil || c.Categories["sensor_air"] != nil || c.Categories["sensor_temp"] == nil {
			t.Fatalf("catalog: %v", err)
		}
		var inv *smarthome.InvalidError
		m := smarthome.Model{ID: "air", Manufacturer: "M", Model: "X", Category: "sensor_air", Features: []string{"online", "co2"}}
		if _, _, err := svc.PutModel(ctx, m); !errors.As(err, &inv) {
			t.Errorf("put of a sensor_air model: %v", err)
		}
	})
}
