package homesql_test

import (
	"context"
	"errors"
	"reflect"
	"sort"
	"sync"
	"testing"

	"partnerapi/internal/smarthome"
	"partnerapi/internal/smarthome/homesql"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// TestStoreConformance runs the smarthome.Store contract on every database.
func TestStoreConformance(t *testing.T) {
	storetest.Each(t, homesql.Migrate, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := homesql.New(db)
		seed, err := smarthome.Seed()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Version(ctx); !errors.Is(err, smarthome.ErrNotFound) {
			t.Fatalf("version before seed: %v", err)
		}
		// Concurrent first starts: exactly one seeds.
		var wg sync.WaitGroup
		wrote := make([]bool, 3)
		for i := range wrote {
			wg.Add(1)
			go func() {
				defer wg.Done()
				w, err := s.Seed(ctx, seed)
				if err != nil {
					t.Error(err)
				}
				wrote[i] = w
			}()
		}
		wg.Wait()
		n := 0
		for _, w := range wrote {
			if w {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("%d seeders wrote, want 1", n)
		}
		c, err := s.Load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if c.Version != 1 || c.Label != seed.Label {
			t.Errorf("version %d label %q", c.Version, c.Label)
		}
		if !reflect.DeepEqual(c.CategoryNames(), seed.CategoryNames()) || len(c.Features) != len(seed.Features) {
			t.Fatal("categories or features differ from the seed")
		}
		for _, name := range seed.CategoryNames() {
			want, _ := seed.CategoryFeatures(name)
			got, err := c.CategoryFeatures(name)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("%s: got %v want %v (%v)", name, got, want, err)
			}
			if !reflect.DeepEqual(c.Categories[name].OneOf, seed.Categories[name].OneOf) {
				t.Errorf("%s: one-of groups differ", name)
			}
		}
		if !reflect.DeepEqual(c.Features["open_rate"], seed.Features["open_rate"]) {
			t.Errorf("feature round trip: %+v vs %+v", c.Features["open_rate"], seed.Features["open_rate"])
		}
		if !reflect.DeepEqual(c.Models, seed.Models) {
			t.Errorf("models differ:\n%+v\n%+v", c.Models, seed.Models)
		}

		m := smarthome.Model{ID: "new", Manufacturer: "A", Model: "B", Category: "relay", Features: []string{"on_off", "online"}}
		created, v, err := s.PutModel(ctx, m)
		if err != nil || !created || v != 2 {
			t.Fatalf("put new: %v %d %v", created, v, err)
		}
		m.Description = "changed"
		created, v, err = s.PutModel(ctx, m)
		if err != nil || created || v != 3 {
			t.Fatalf("put again: %v %d %v", created, v, err)
		}
		c, _ = s.Load(ctx)
		if c.Version != 3 || len(c.Models) != len(seed.Models)+1 {
			t.Fatalf("after put: version %d, %d models", c.Version, len(c.Models))
		}
		if v, err = s.DeleteModel(ctx, "new"); err != nil || v != 4 {
			t.Fatalf("delete: %d %v", v, err)
		}
		if _, err = s.DeleteModel(ctx, "new"); !errors.Is(err, smarthome.ErrNotFound) {
			t.Fatalf("delete twice: %v", err)
		}
		if v, _ := s.Version(ctx); v != 4 {
			t.Errorf("failed delete bumped the version to %d", v)
		}
		if w, err := s.Seed(ctx, seed); err != nil || w {
			t.Errorf("reseed wrote=%v err=%v", w, err)
		}
		if v, _ := s.Version(ctx); v != 4 {
			t.Errorf("reseed changed the version to %d", v)
		}

		if err := s.CreateCredential(ctx, smarthome.KindAgent, "a1", "h1"); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateCredential(ctx, smarthome.KindAgent, "a1", "h2"); !errors.Is(err, smarthome.ErrDuplicate) {
			t.Errorf("duplicate login: %v", err)
		}
		if err := s.CreateCredential(ctx, smarthome.KindAdmin, "a1", "h3"); err != nil {
			t.Errorf("same login as admin: %v", err)
		}
		if h, err := s.CredentialHash(ctx, smarthome.KindAgent, "a1"); err != nil || h != "h1" {
			t.Errorf("hash %q %v", h, err)
		}
		if _, err := s.CredentialHash(ctx, smarthome.KindAgent, "nobody"); !errors.Is(err, smarthome.ErrNotFound) {
			t.Errorf("unknown login: %v", err)
		}

		// Every credential change bumps the credentials counter and leaves
		// the catalog version alone; failed changes bump nothing.
		st, err := s.Stamp(ctx)
		if err != nil || st.Catalog != 4 {
			t.Fatalf("stamp %+v %v", st, err)
		}
		for _, tc := range []struct {
			name    string
			change  func() error
			wantErr error
			bumped  bool
		}{
			{"replace", func() error { return s.ReplaceCredential(ctx, smarthome.KindAgent, "a1", "h4") }, nil, true},
			{"replace unknown", func() error { return s.ReplaceCredential(ctx, smarthome.KindAgent, "nobody", "h") }, smarthome.ErrNotFound, false},
			{"delete", func() error { return s.DeleteCredential(ctx, smarthome.KindAdmin, "a1") }, nil, true},
			{"delete again", func() error { return s.DeleteCredential(ctx, smarthome.KindAdmin, "a1") }, smarthome.ErrNotFound, false},
			{"create", func() error { return s.CreateCredential(ctx, smarthome.KindAdmin, "a1", "h5") }, nil, true},
		} {
			if err := tc.change(); !errors.Is(err, tc.wantErr) {
				t.Errorf("%s: %v, want %v", tc.name, err, tc.wantErr)
			}
			next, err := s.Stamp(ctx)
			if err != nil || next.Catalog != st.Catalog || (next.Credentials != st.Credentials) != tc.bumped {
				t.Errorf("%s: stamp %+v → %+v (%v)", tc.name, st, next, err)
			}
			st = next
		}
		if h, err := s.CredentialHash(ctx, smarthome.KindAgent, "a1"); err != nil || h != "h4" {
			t.Errorf("replaced hash %q %v", h, err)
		}
	})
}

// Models load in ASCII order of id whatever the database's collation: on
// PostgreSQL the id column is given a linguistic collation, as a database
// created with an en_US locale has by default, under which "light.x" sorts
// before "Mdl_x" and "ID_x" after "hub".
func TestModelOrderIsASCII(t *testing.T) {
	storetest.Each(t, homesql.Migrate, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		if db.Dialect == sqldb.Postgres {
			if _, err := db.W.ExecContext(ctx, `ALTER TABLE home_models ALTER COLUMN id TYPE TEXT COLLATE "und-x-icu"`); err != nil {
				t.Skipf("SKIPPED LOUDLY: no ICU collation to simulate a linguistic default: %v", err)
			}
		}
		s := homesql.New(db)
		seed, err := smarthome.Seed()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Seed(ctx, seed); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"hub", "Mdl_x", "light.x", "a-b", "aB", "_z"} {
			if _, _, err := s.PutModel(ctx, smarthome.Model{ID: id, Manufacturer: "A", Model: "B", Category: "hub", Features: []string{"online"}}); err != nil {
				t.Fatal(err)
			}
		}
		c, err := s.Load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]string, len(c.Models))
		for i, m := range c.Models {
			ids[i] = m.ID
		}
		if !sort.StringsAreSorted(ids) {
			t.Errorf("models not in ASCII order: %q", ids)
		}
	})
}
