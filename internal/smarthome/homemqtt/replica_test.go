package homemqtt_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"partnerapi/internal/smarthome"
	"partnerapi/internal/smarthome/homemqtt"
	"partnerapi/internal/smarthome/homesql"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
	"partnerapi/internal/testenv"
)

// testLease is the replicas' lease in these tests: a takeover after a
// crash comes within about 1.2 of it.
const testLease = 2 * time.Second

// cutStore is the replicas' real store with a switch that cuts this
// replica off the database: every call fails while cut, as across a
// network partition between the replica and the database.
type cutStore struct {
	smarthome.GateStore
	cut atomic.Bool
}

var errCut = errors.New("test: this replica is cut off the database")

func (s *cutStore) GateLease(ctx context.Context, root string) (smarthome.GateLease, error) {
	if s.cut.Load() {
		return smarthome.GateLease{}, errCut
	}
	return s.GateStore.GateLease(ctx, root)
}

func (s *cutStore) TakeGateLease(ctx context.Context, root, holder string, seen smarthome.GateLease) (bool, error) {
	if s.cut.Load() {
		return false, errCut
	}
	return s.GateStore.TakeGateLease(ctx, root, holder, seen)
}

func (s *cutStore) RenewGateLease(ctx context.Context, root, holder string) (bool, error) {
	if s.cut.Load() {
		return false, errCut
	}
	return s.GateStore.RenewGateLease(ctx, root, holder)
}

func (s *cutStore) ReleaseGateLease(ctx context.Context, root, holder string) error {
	if s.cut.Load() {
		return errCut
	}
	return s.GateStore.ReleaseGateLease(ctx, root, holder)
}

// startReplicas starts two replicas of the gate under root on db and the
// broker at url, each with a store of its own that can be cut, and
// returns them once one of them leads.
func startReplicas(t *testing.T, db *sqldb.DB, url, root string) ([2]*homemqtt.Replica, [2]*cutStore) {
	t.Helper()
	var rs [2]*homemqtt.Replica
	var stores [2]*cutStore
	for i := range rs {
		stores[i] = &cutStore{GateStore: homesql.New(db)}
		r, err := homemqtt.StartReplica(homemqtt.ReplicaConfig{
			Gate:  homemqtt.Config{Broker: url, Root: root, Endpoint: "http://127.0.0.1:9445"},
			Store: stores[i], Lease: testLease,
		}, seeded(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(r.Close)
		rs[i] = r
	}
	waitFor(t, "a replica to lead and connect", func() bool { return leader(rs) >= 0 })
	return rs, stores
}

// leader is the index of the replica that leads with a connected gate,
// -1 when none does; both leading fails the test.
func leader(rs [2]*homemqtt.Replica) int {
	at := -1
	for i, r := range rs {
		if r.Leading() && r.Gate() != nil && r.Gate().Connected() {
			if at >= 0 {
				panic("two replicas lead at once")
			}
			at = i
		}
	}
	return at
}

// answers counts what arrives on a within quiet of the last message,
// after waiting up to 10 s for the first.
func answers(a *agent, quiet time.Duration) []mqtt.Message {
	var got []mqtt.Message
	wait := 10 * time.Second
	for {
		select {
		case m := <-a.got:
			got = append(got, m)
			wait = quiet
		case <-time.After(wait):
			return got
		}
	}
}

const badConfig = `{"devices":[{"id":"x","name":"x","default_name":"x","model_id":"nope"}]}`

// Two replicas on one database and one broker: one leads, and an agent's
// message is answered once; when the leader closes, the other takes over
// within a tick of the lease, asks the agents the first heard for their
// configs, and answers alone.
func TestReplicasAnswerOnceAndHandOver(t *testing.T) {
	url := testenv.MQTTBroker(t)
	storetest.Each(t, homesql.Migrate, func(t *testing.T, db *sqldb.DB) {
		root := testRoot(t, url)
		rs, _ := startReplicas(t, db, url, root)
		first := leader(rs)
		errs := newAgent(t, url, root+"/ctl/down/errors")
		requests := newAgent(t, url, root+"/ctl/down/config_request")
		errs.publish(root+"/ctl/up/config", badConfig, false)
		if got := answers(errs, time.Second); len(got) != 1 || !strings.Contains(string(got[0].Payload()), "nope") {
			t.Fatalf("answers to one config from two replicas: %d, want 1", len(got))
		}

		closed := time.Now()
		rs[first].Close()
		waitFor(t, "the other replica to take over", func() bool { return leader(rs) == 1-first })
		t.Logf("handover after Close: %s", time.Since(closed).Round(time.Millisecond))
		// The new leader rebuilds what the first knew of the agent.
		if m := requests.next(); string(m.Payload()) != "{}" {
			t.Fatalf("config_request of the new leader: %q", m.Payload())
		}
		errs.publish(root+"/ctl/up/config", badConfig, false)
		if got := answers(errs, time.Second); len(got) != 1 {
			t.Fatalf("answers after the handover: %d, want 1", len(got))
		}
	})
}

// A leader cut off the database (as by a partition, or frozen: it renews
// nothing) falls silent when its lease's deadline passes, before the other
// replica takes over once the lease lapsed; an agent's message is then
// answered by the new leader alone, within the bound.
func TestReplicaTakesOverALapsedLease(t *testing.T) {
	url := testenv.MQTTBroker(t)
	storetest.Each(t, homesql.Migrate, func(t *testing.T, db *sqldb.DB) {
		root := testRoot(t, url)
		rs, stores := startReplicas(t, db, url, root)
		first := leader(rs)
		errs := newAgent(t, url, root+"/ctl/down/errors")

		cut := time.Now()
		stores[first].cut.Store(true)
		waitFor(t, "the cut-off leader to fall silent", func() bool { return !rs[first].Leading() })
		silent := time.Since(cut)
		waitFor(t, "the other replica to take over", func() bool { return leader(rs) == 1-first })
		took := time.Since(cut)
		t.Logf("cut-off leader silent after %s, taken over after %s", silent.Round(time.Millisecond), took.Round(time.Millisecond))
		// The takeover is due about a lease after the last renewal; the
		// bound leaves room for a loaded CI host (the race detector, other
		// packages' tests on two cores) and still fails a replica that
		// waits for something other than the lease to lapse.
		if limit := 3*testLease + 4*time.Second; took > limit {
			t.Errorf("taken over %s after the cut, want within %s (lease %s)", took, limit, testLease)
		}
		if rs[first].Leading() {
			t.Fatal("the cut-off replica leads again")
		}
		errs.publish(root+"/ctl/up/config", badConfig, false)
		if got := answers(errs, time.Second); len(got) != 1 {
			t.Fatalf("answers after the takeover: %d, want 1", len(got))
		}
		// Back on the database, the old leader finds the lease taken and
		// stays a follower.
		stores[first].cut.Store(false)
		time.Sleep(testLease)
		if leader(rs) != 1-first {
			t.Fatal("the leadership moved back when the old leader came back")
		}
	})
}

// What the admin API of the replica that does not lead sends reaches the
// agent once, through the leader, checked against what the leader knows
// of the agent: a command for a device of its config is delivered, one
// for a device it never configured is refused as the leader refuses it.
func TestReplicaRelaysAdminMessagesToTheLeader(t *testing.T) {
	url := testenv.MQTTBroker(t)
	storetest.Each(t, homesql.Migrate, func(t *testing.T, db *sqldb.DB) {
		root := testRoot(t, url)
		rs, _ := startReplicas(t, db, url, root)
		follower := rs[1-leader(rs)]
		dev := newAgent(t, url, root+"/dev/down/status_request")
		commands := newAgent(t, url, root+"/dev/down/commands", root+"/dev/down/config_request")
		dev.publish(root+"/dev/up/config", `{"devices":[`+lamp+`]}`, false)
		dev.next()

		topic, err := follower.Command(context.Background(), "dev", []byte(lampOn))
		if err != nil || topic != root+"/dev/down/commands" {
			t.Fatalf("command through the follower: %q %v", topic, err)
		}
		if got := answers(commands, time.Second); len(got) != 1 || string(got[0].Payload()) != lampOn {
			t.Fatalf("the agent got %d messages for one relayed command, want 1", len(got))
		}
		_, err = follower.Command(context.Background(), "dev", []byte(`{"devices":{"ghost":{"states":[{"key":"on_off","value":{"type":"BOOL","bool_value":true}}]}}}`))
		if !errors.Is(err, smarthome.ErrNotFound) && !errors.As(err, new(*smarthome.InvalidError)) {
			t.Fatalf("a command for a device never configured, relayed: %v, want refused as the leader refuses it", err)
		}
		if _, err := follower.Send(context.Background(), "dev", smarthome.ConfigRequestKind, []byte(`{}`)); err != nil {
			t.Fatalf("config request through the follower: %v", err)
		}
		if m := commands.next(); m.Topic() != root+"/dev/down/config_request" {
			t.Fatalf("got %s, want the relayed config request", m.Topic())
		}
		// Each sender deletes its message's row once it has the answer.
		if n := relayRows(t, db); n != 0 {
			t.Fatalf("%d relayed messages' rows left after their answers, want 0", n)
		}
	})
}

// relayRows counts the rows of relayed messages on db.
func relayRows(t *testing.T, db *sqldb.DB) int {
	t.Helper()
	var n int
	if err := db.W.QueryRowContext(context.Background(), `SELECT COUNT(*) FROM home_mqtt_relay`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A message relayed while no replica leads (another process holds the
// lease and has not let it lapse) is withdrawn with ErrNoLeader, and its
// row goes with it: withdrawn rows do not pile up while the leadership
// changes hands.
func TestReplicaRelayWithoutLeaderLeavesNoRow(t *testing.T) {
	storetest.Each(t, homesql.Migrate, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		store := homesql.New(db)
		root := fmt.Sprintf("partnerapi-test-%d", time.Now().UnixNano())
		if ok, err := store.TakeGateLease(ctx, root, "another-process", smarthome.GateLease{}); !ok || err != nil {
			t.Fatalf("taking the lease for another process: %v %v", ok, err)
		}
		// A lease of an hour: this replica never takes it over during the test.
		r, err := homemqtt.StartReplica(homemqtt.ReplicaConfig{
			Gate:  homemqtt.Config{Broker: "tcp://127.0.0.1:1", Root: root, Endpoint: "http://127.0.0.1:9445"},
			Store: store, Lease: time.Hour,
		}, seeded(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(r.Close)
		if _, err := r.Command(ctx, "dev", []byte(lampOn)); !errors.Is(err, homemqtt.ErrNoLeader) {
			t.Fatalf("a command with no leader: %v, want ErrNoLeader", err)
		}
		if n := relayRows(t, db); n != 0 {
			t.Fatalf("%d rows left after a withdrawn message, want 0", n)
		}
	})
}

// Close may come from more than one place at once (a signal's shutdown
// and a failed start's cleanup); every call returns once the replica has
// stopped, and none panics on the channel another call closed.
func TestReplicaCloseFromManyGoroutines(t *testing.T) {
	url := testenv.MQTTBroker(t)
	storetest.Each(t, homesql.Migrate, func(t *testing.T, db *sqldb.DB) {
		rs, _ := startReplicas(t, db, url, testRoot(t, url))
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rs[0].Close()
			}()
		}
		wg.Wait()
		if rs[0].Leading() {
			t.Fatal("a closed replica still counts itself the leader")
		}
	})
}

// A replica stopping while its new gate connects to a broker that takes
// the connection and never answers it returns at once, not after the
// connection's 10 s timeout: a serve stopped then exits within its
// shutdown grace.
func TestReplicaCloseWhileTheBrokerDoesNotAnswer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c // held open, never read: no CONNACK comes
		}
	}()
	t.Cleanup(func() {
		for {
			select {
			case c := <-accepted:
				c.Close()
			default:
				return
			}
		}
	})
	storetest.Each(t, homesql.Migrate, func(t *testing.T, db *sqldb.DB) {
		r, err := homemqtt.StartReplica(homemqtt.ReplicaConfig{
			Gate:  homemqtt.Config{Broker: "tcp://" + ln.Addr().String(), Root: fmt.Sprintf("partnerapi-test-%d", time.Now().UnixNano()), Endpoint: "http://127.0.0.1:9445"},
			Store: homesql.New(db), Lease: 5 * time.Second,
		}, seeded(t))
		if err != nil {
			t.Fatal(err)
		}
		select {
		case c := <-accepted:
			accepted <- c
		case <-time.After(5 * time.Second):
			r.Close()
			t.Fatal("the leading replica's gate never dialled the broker")
		}
		began := time.Now()
		r.Close()
		if took := time.Since(began); took > 3*time.Second {
			t.Fatalf("Close took %s while the gate connected, want well under the 10 s connect timeout", took.Round(time.Millisecond))
		}
	})
}
