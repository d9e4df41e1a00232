package homesql_test

import (
	"context"
	"reflect"
	"sync"
	"testing"
	"time"

	"partnerapi/internal/smarthome"
	"partnerapi/internal/smarthome/homesql"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
)

// TestGateStoreConformance runs the smarthome.GateStore contract on every
// database: of replicas racing for a lease or a relayed message, exactly
// one wins.
func TestGateStoreConformance(t *testing.T) {
	storetest.Each(t, homesql.Migrate, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := homesql.New(db)
		race := func(n int, f func(i int) bool) int {
			var wg sync.WaitGroup
			won := make([]bool, n)
			for i := range won {
				wg.Add(1)
				go func() { defer wg.Done(); won[i] = f(i) }()
			}
			wg.Wait()
			c := 0
			for _, w := range won {
				if w {
					c++
				}
			}
			return c
		}
		holders := []string{"a", "b", "c"}

		// The first take of a root nobody held: one of three wins.
		if l, err := s.GateLease(ctx, "r"); err != nil || l != (smarthome.GateLease{}) {
			t.Fatalf("lease before any take: %+v %v", l, err)
		}
		if n := race(3, func(i int) bool {
			ok, err := s.TakeGateLease(ctx, "r", holders[i], smarthome.GateLease{})
			if err != nil {
				t.Error(err)
			}
			return ok
		}); n != 1 {
			t.Fatalf("%d first takers won, want 1", n)
		}
		l, err := s.GateLease(ctx, "r")
		if err != nil || l.Holder == "" || l.Beat != 1 {
			t.Fatalf("lease after the take: %+v %v", l, err)
		}
		holder := l.Holder
		// Renewals bump the counter; another's renewal is refused.
		if ok, err := s.RenewGateLease(ctx, "r", holder); !ok || err != nil {
			t.Fatalf("holder's renewal: %v %v", ok, err)
		}
		if ok, err := s.RenewGateLease(ctx, "r", "x"); ok || err != nil {
			t.Fatalf("a non-holder's renewal: %v %v", ok, err)
		}
		// A take from a stale view loses; of three from the current one,
		// one wins.
		if ok, _ := s.TakeGateLease(ctx, "r", "x", l); ok {
			t.Fatal("a take from a stale view of the lease won")
		}
		l, _ = s.GateLease(ctx, "r")
		if l.Beat != 2 {
			t.Fatalf("beat %d after one renewal, want 2", l.Beat)
		}
		if n := race(3, func(i int) bool {
			ok, err := s.TakeGateLease(ctx, "r", "t"+holders[i], l)
			if err != nil {
				t.Error(err)
			}
			return ok
		}); n != 1 {
			t.Fatalf("%d takers of a lapsed lease won, want 1", n)
		}
		if ok, _ := s.RenewGateLease(ctx, "r", holder); ok {
			t.Fatal("the old holder renewed a lease taken over")
		}
		// A release by the holder leaves the lease to anyone; one by
		// another is ignored. Other roots are apart.
		l, _ = s.GateLease(ctx, "r")
		if err := s.ReleaseGateLease(ctx, "r", holder); err != nil {
			t.Fatal(err)
		}
		if l2, _ := s.GateLease(ctx, "r"); l2 != l {
			t.Fatalf("a non-holder's release changed the lease: %+v, was %+v", l2, l)
		}
		if err := s.ReleaseGateLease(ctx, "r", l.Holder); err != nil {
			t.Fatal(err)
		}
		if l2, _ := s.GateLease(ctx, "r"); l2.Holder != "" || l2.Beat != l.Beat+1 {
			t.Fatalf("lease after its release: %+v", l2)
		}
		if l2, _ := s.GateLease(ctx, "other"); l2 != (smarthome.GateLease{}) {
			t.Fatalf("another root's lease: %+v", l2)
		}

		// Relayed messages: each claimed once among claimers, or withdrawn
		// by its sender before any claim, never both.
		now := time.Now()
		body := []byte("{\"devices\":{}}\x00\xff")
		var ids []int64
		for range 5 {
			id, err := s.QueueGateMessage(ctx, "r", smarthome.GateMessage{Agent: "dev", Kind: "commands", Body: body}, now)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		if ok, err := s.WithdrawGateMessage(ctx, ids[0]); !ok || err != nil {
			t.Fatalf("withdraw before any claim: %v %v", ok, err)
		}
		var mu sync.Mutex
		claimed := map[int64]int{}
		race(3, func(int) bool {
			ms, err := s.ClaimGateMessages(ctx, "r", 10)
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, m := range ms {
				claimed[m.ID]++
				if m.Agent != "dev" || m.Kind != "commands" || string(m.Body) != string(body) {
					t.Errorf("claimed %+v", m)
				}
			}
			return false
		})
		if len(claimed) != 4 || claimed[ids[0]] != 0 {
			t.Fatalf("claims %v of %v, want each but the withdrawn one once", claimed, ids)
		}
		for id, n := range claimed {
			if n != 1 {
				t.Fatalf("message %d claimed %d times", id, n)
			}
		}
		if ok, _ := s.WithdrawGateMessage(ctx, ids[1]); ok {
			t.Fatal("a claimed message was withdrawn")
		}
		if _, done, err := s.GateMessageResult(ctx, ids[1]); done || err != nil {
			t.Fatalf("result of a message being sent: done %v %v", done, err)
		}
		want := smarthome.GateResult{ErrKind: smarthome.GateErrInvalid, ErrText: `["x"]`}
		if err := s.FinishGateMessage(ctx, ids[1], want); err != nil {
			t.Fatal(err)
		}
		if got, done, err := s.GateMessageResult(ctx, ids[1]); !done || err != nil || got != want {
			t.Fatalf("result %+v done %v %v, want %+v", got, done, err, want)
		}
		// Messages older than an hour go as the next is queued.
		if _, err := s.QueueGateMessage(ctx, "r", smarthome.GateMessage{Agent: "dev", Kind: "errors", Body: body}, now.Add(2*time.Hour)); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.GateMessageResult(ctx, ids[1]); err == nil {
			t.Fatal("a message two hours old is still kept")
		}

		// The agents heard, the latest first, per root.
		for i, name := range []string{"a1", "a2", "a3"} {
			if err := s.RememberGateAgent(ctx, "r", name, now.Add(time.Duration(i)*time.Second)); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.RememberGateAgent(ctx, "r", "a1", now.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if got, err := s.GateAgents(ctx, "r", 2); err != nil || !reflect.DeepEqual(got, []string{"a1", "a3"}) {
			t.Fatalf("agents heard: %v %v", got, err)
		}
		if got, _ := s.GateAgents(ctx, "other", 10); len(got) != 0 {
			t.Fatalf("another root's agents: %v", got)
		}

		// Forgetting keeps the most recently heard of a root, and another
		// root's whole list.
		if err := s.RememberGateAgent(ctx, "other", "o1", now); err != nil {
			t.Fatal(err)
		}
		if err := s.ForgetGateAgents(ctx, "r", 2); err != nil {
			t.Fatal(err)
		}
		if got, err := s.GateAgents(ctx, "r", 10); err != nil || !reflect.DeepEqual(got, []string{"a1", "a3"}) {
			t.Fatalf("agents heard after forgetting all but two: %v %v", got, err)
		}
		if got, err := s.GateAgents(ctx, "other", 10); err != nil || !reflect.DeepEqual(got, []string{"o1"}) {
			t.Fatalf("another root's agents after forgetting r's: %v %v", got, err)
		}
		if err := s.ForgetGateAgents(ctx, "r", 0); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.GateAgents(ctx, "r", 10); len(got) != 0 {
			t.Fatalf("agents heard after forgetting all: %v", got)
		}
	})
}

// Deleting an agent's credential forgets it in the gates' list of agents
// heard, on every root, and leaves the other agents and an admin of the
// same login alone: the list does not keep one row per agent ever deleted.
func TestDeleteAgentCredentialForgetsGateAgent(t *testing.T) {
	storetest.Each(t, homesql.Migrate, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		s := homesql.New(db)
		now := time.Unix(1_700_000_000, 0)
		for _, login := range []string{"gone", "kept"} {
			if err := s.CreateCredential(ctx, smarthome.KindAgent, login, "hash-"+login); err != nil {
				t.Fatal(err)
			}
			for _, root := range []string{"r1", "r2"} {
				if err := s.RememberGateAgent(ctx, root, login, now); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := s.CreateCredential(ctx, smarthome.KindAdmin, "kept", "hash-admin"); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteCredential(ctx, smarthome.KindAdmin, "kept"); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteCredential(ctx, smarthome.KindAgent, "gone"); err != nil {
			t.Fatal(err)
		}
		for _, root := range []string{"r1", "r2"} {
			got, err := s.GateAgents(ctx, root, 10)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, []string{"kept"}) {
				t.Errorf("agents heard under %s after deleting gone's credential: %q, want [kept]", root, got)
			}
		}
	})
}
