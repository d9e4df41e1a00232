package bankingsql

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// Replicas starting at once on an empty record each offer their own key
// identity: exactly one is recorded and every one of them reads it back,
// on SQLite and, with PARTNERAPI_TEST_DATABASE_URL, on PostgreSQL.
func TestRecordKeyIdentityOneWinnerAmongConcurrentStarts(t *testing.T) {
	storetest.Each(t, MigrateIdentity, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := NewIdentityStore(db)
		const n = 8
		got := make([]string, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got[i], errs[i] = s.RecordKeyIdentity(ctx, "jws", fmt.Sprintf("kid-%d", i))
			}()
		}
		wg.Wait()
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("start %d: %v", i, errs[i])
			}
			if got[i] != got[0] {
				t.Fatalf("start %d read %q, start 0 read %q: two identities recorded", i, got[i], got[0])
			}
		}
		if again, err := s.RecordKeyIdentity(ctx, "jws", "kid-other"); err != nil || again != got[0] {
			t.Fatalf("a later start read %q, %v; want the first record %q", again, err, got[0])
		}
	})
}

// A rotation moves the record only from the identity it names; adopting
// replaces whatever is recorded; each name is its own record.
func TestKeyIdentityMoveAndSet(t *testing.T) {
	storetest.Each(t, MigrateIdentity, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := NewIdentityStore(db)
		for _, name := range []string{"webhook", "jws"} {
			if _, err := s.RecordKeyIdentity(ctx, name, "old-"+name); err != nil {
				t.Fatal(err)
			}
		}
		steps := []struct {
			from, to string
			moved    bool
			want     string
		}{
			{"old-webhook", "new", true, "new"},
			{"old-webhook", "newer", false, "new"}, // another replica moved it first
		}
		for _, st := range steps {
			moved, err := s.MoveKeyIdentity(ctx, "webhook", st.from, st.to)
			if err != nil || moved != st.moved {
				t.Fatalf("move %s→%s: %v, %v; want %v", st.from, st.to, moved, err, st.moved)
			}
			if rec, err := s.RecordKeyIdentity(ctx, "webhook", "x"); err != nil || rec != st.want {
				t.Fatalf("after move %s→%s: %q, %v; want %q", st.from, st.to, rec, err, st.want)
			}
		}
		if err := s.SetKeyIdentity(ctx, "webhook", "adopted"); err != nil {
			t.Fatal(err)
		}
		if err := s.SetKeyIdentity(ctx, "id_token_rs256", "rsa-kid"); err != nil {
			t.Fatal(err)
		}
		for name, want := range map[string]string{"webhook": "adopted", "jws": "old-jws", "id_token_rs256": "rsa-kid"} {
			if rec, err := s.RecordKeyIdentity(ctx, name, "x"); err != nil || rec != want {
				t.Fatalf("%s: %q, %v; want %q", name, rec, err, want)
			}
		}
	})
}
