package smarthome_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"partnerapi/internal/smarthome"
	"partnerapi/internal/smarthome/homesql"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// AgentRegistered answers from a set of the agent logins that the store is
// asked for only when the credentials change (here or in another Service,
// within the recheck bound) or VerifiedTTL passes: any number of made-up
// names between changes costs no query, an admin login is no agent, and a
// login created or deleted by another Service is seen after the recheck.
func TestAgentRegisteredCache(t *testing.T) {
	storetest.Each(t, homesql.Migrate, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		srv, store, clock, other := twoServers(t, db)
		for _, c := range []struct{ kind, login string }{{smarthome.KindAgent, "ctl"}, {smarthome.KindAdmin, "root"}} {
			if _, err := other.CreateCredential(ctx, c.kind, c.login); err != nil {
				t.Fatal(err)
			}
		}
		clock.advance(recheck)
		// ReadAgents fills the set that AgentLastRegistered answers from
		// (the gate calls it at start), and AgentRegistered reads it no
		// more until the credentials change.
		if _, read := srv.AgentLastRegistered("ctl"); read {
			t.Fatal("a set read before any was")
		}
		if err := srv.ReadAgents(ctx); err != nil {
			t.Fatal(err)
		}
		if registered, read := srv.AgentLastRegistered("ctl"); !registered || !read {
			t.Fatalf("after ReadAgents: ctl registered %v, set read %v", registered, read)
		}
		want := func(login string, registered bool) {
			t.Helper()
			got, err := srv.AgentRegistered(ctx, login)
			if err != nil || got != registered {
				t.Fatalf("AgentRegistered(%q) = %v, %v; want %v", login, got, err, registered)
			}
		}
		want("ctl", true)
		want("root", false)
		for i := range 1000 {
			want(fmt.Sprintf("made-up-%d", i), false)
		}
		want("bad/name", false)
		if n := store.logins.Load(); n != 1 {
			t.Fatalf("%d reads of the logins for 1000 names between changes, want 1", n)
		}

		if _, err := other.CreateCredential(ctx, smarthome.KindAgent, "late"); err != nil {
			t.Fatal(err)
		}
		want("late", false) // within the recheck bound
		clock.advance(recheck)
		want("late", true)
		if err := other.DeleteCredential(ctx, smarthome.KindAgent, "ctl"); err != nil {
			t.Fatal(err)
		}
		clock.advance(recheck)
		want("ctl", false)
		if _, err := srv.CreateCredential(ctx, smarthome.KindAgent, "own"); err != nil {
			t.Fatal(err)
		}
		want("own", true) // this Service's own change: at once
		before := store.logins.Load()
		clock.advance(smarthome.VerifiedTTL + time.Second)
		want("own", true)
		if n := store.logins.Load() - before; n != 1 {
			t.Fatalf("%d reads of the logins after VerifiedTTL, want 1", n)
		}
	})
}
