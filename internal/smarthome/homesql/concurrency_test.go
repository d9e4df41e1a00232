package homesql_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"partnerapi/internal/smarthome"
	"partnerapi/internal/smarthome/homesql"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// TestConcurrentModelWrites puts and deletes the same model ids from many
// goroutines at once against the real store. The admin API answers 201 to
// the put that created a model and 200 to one that replaced it, so of
// concurrent puts of one new id exactly one may report a creation; each
// write bumps the catalog version once, so every answer names a version of
// its own and no bump is lost; and of concurrent deletes of one id exactly
// one succeeds.
func TestConcurrentModelWrites(t *testing.T) {
	storetest.Each(t, homesql.Migrate, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := homesql.New(db)
		seed, err := smarthome.Seed()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Seed(ctx, seed); err != nil {
			t.Fatal(err)
		}
		start, err := s.Version(ctx)
		if err != nil {
			t.Fatal(err)
		}
		const ids, writers = 20, 8
		var mu sync.Mutex
		versions := map[int64]bool{}
		record := func(v int64) {
			mu.Lock()
			defer mu.Unlock()
			if versions[v] {
				t.Errorf("version %d answered twice", v)
			}
			versions[v] = true
		}
		for i := range ids {
			id := fmt.Sprintf("race-%d", i)
			var created sync.WaitGroup
			var creations, deletes int
			for range writers {
				created.Add(1)
				go func() {
					defer created.Done()
					m := smarthome.Model{ID: id, Manufacturer: "A", Model: "B", Category: "relay", Features: []string{"on_off", "online"}}
					c, v, err := s.PutModel(ctx, m)
					if err != nil {
						t.Error(err)
						return
					}
					record(v)
					if c {
						mu.Lock()
						creations++
						mu.Unlock()
					}
				}()
			}
			created.Wait()
			if creations != 1 {
				t.Errorf("%s: %d of %d concurrent puts reported a creation, want 1", id, creations, writers)
			}
			var deleted sync.WaitGroup
			for range writers {
				deleted.Add(1)
				go func() {
					defer deleted.Done()
					v, err := s.DeleteModel(ctx, id)
					if errors.Is(err, smarthome.ErrNotFound) {
						return
					}
					if err != nil {
						t.Error(err)
						return
					}
					record(v)
					mu.Lock()
					deletes++
					mu.Unlock()
				}()
			}
			deleted.Wait()
			if deletes != 1 {
				t.Errorf("%s: %d of %d concurrent deletes succeeded, want 1", id, deletes, writers)
			}
		}
		end, err := s.Version(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want := start + int64(len(versions)); end != want {
			t.Errorf("version %d after %d answered writes from %d, want %d", end, len(versions), start, want)
		}
		c, err := s.Load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Models) != len(seed.Models) {
			t.Errorf("%d models after every race model was deleted, want the seed's %d", len(c.Models), len(seed.Models))
		}
	})
}

// TestConcurrentAgentCreates creates one agent login from many goroutines
// at once, as two admins (or a retried CLI call) might. The password is
// shown once, by the create that stored it, so exactly one create may
// succeed: a second success would hand out a password whose hash was never
// stored (or overwrote the first's). The others get ErrDuplicate, which the
// admin API answers 409, and each success bumps the credentials counter
// once.
func TestConcurrentAgentCreates(t *testing.T) {
	storetest.Each(t, homesql.Migrate, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := homesql.New(db)
		seed, err := smarthome.Seed()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Seed(ctx, seed); err != nil {
			t.Fatal(err)
		}
		before, err := s.Stamp(ctx)
		if err != nil {
			t.Fatal(err)
		}
		const logins, writers = 10, 8
		for i := range logins {
			login := fmt.Sprintf("agent-%d", i)
			var wg sync.WaitGroup
			var mu sync.Mutex
			var won []string
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					hash := fmt.Sprintf("hash-%d", w)
					err := s.CreateCredential(ctx, smarthome.KindAgent, login, hash)
					switch {
					case err == nil:
						mu.Lock()
						won = append(won, hash)
						mu.Unlock()
					case !errors.Is(err, smarthome.ErrDuplicate):
						t.Errorf("%s: concurrent create: %v, want ErrDuplicate", login, err)
					}
				}()
			}
			wg.Wait()
			if len(won) != 1 {
				t.Fatalf("%s: %d of %d concurrent creates succeeded, want 1", login, len(won), writers)
			}
			if h, err := s.CredentialHash(ctx, smarthome.KindAgent, login); err != nil || h != won[0] {
				t.Fatalf("%s: stored hash %q (%v), want the winner's %q", login, h, err, won[0])
			}
		}
		after, err := s.Stamp(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if after.Credentials != before.Credentials+logins {
			t.Errorf("credentials counter %d → %d after %d creates, want one bump each", before.Credentials, after.Credentials, logins)
		}
	})
}

// TestLoadIsOneSnapshot loads the catalog while models are being added. A
// loaded catalog is served under its version as the ETag, so its models
// must be those of that version: each put below adds one model and one
// version, so a load must hold exactly as many of them as its version
// counts past the start. Read in separate snapshots, the version can be
// read before a put commits and the models after it, and agents would
// cache that version's ETag with another version's models.
func TestLoadIsOneSnapshot(t *testing.T) {
	storetest.Each(t, homesql.Migrate, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := homesql.New(db)
		seed, err := smarthome.Seed()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Seed(ctx, seed); err != nil {
			t.Fatal(err)
		}
		start, err := s.Version(ctx)
		if err != nil {
			t.Fatal(err)
		}
		const puts = 150
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := range puts {
				m := smarthome.Model{ID: fmt.Sprintf("snap-%03d", i), Manufacturer: "A", Model: "B", Category: "relay", Features: []string{"on_off", "online"}}
				if _, _, err := s.PutModel(ctx, m); err != nil {
					t.Error(err)
					return
				}
			}
		}()
		loads := 0
		for running := true; running; loads++ {
			select {
			case <-done:
				running = false
			default:
			}
			c, err := s.Load(ctx)
			if err != nil {
				t.Error(err)
				break
			}
			if got, want := len(c.Models)-len(seed.Models), int(c.Version-start); got != want {
				t.Errorf("load %d: version %d counts %d puts past the start, but %d of their models were read", loads, c.Version, want, got)
				break
			}
		}
		// The puts stop at their first error only; the database must
		// outlive them.
		<-done
		t.Logf("%d loads during %d puts", loads, puts)
	})
}

// TestConcurrentPutAndDelete puts and deletes one existing model at once.
// Every write takes the catalog row (the version) and the model's row, and
// must take them in the same order: in opposite orders a put and a delete
// each hold the row the other waits for, and PostgreSQL ends the deadlock
// by failing one of them, a 500 for a valid request. So every put succeeds
// and every delete succeeds or finds the model already gone.
func TestConcurrentPutAndDelete(t *testing.T) {
	storetest.Each(t, homesql.Migrate, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := homesql.New(db)
		seed, err := smarthome.Seed()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Seed(ctx, seed); err != nil {
			t.Fatal(err)
		}
		m := smarthome.Model{ID: "contested", Manufacturer: "A", Model: "B", Category: "relay", Features: []string{"on_off", "online"}}
		for range 30 {
			if _, _, err := s.PutModel(ctx, m); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for i := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if i%2 == 0 {
						if _, _, err := s.PutModel(ctx, m); err != nil {
							t.Errorf("put beside deletes: %v", err)
						}
						return
					}
					if _, err := s.DeleteModel(ctx, m.ID); err != nil && !errors.Is(err, smarthome.ErrNotFound) {
						t.Errorf("delete beside puts: %v", err)
					}
				}()
			}
			wg.Wait()
			if t.Failed() {
				return
			}
		}
	})
}
