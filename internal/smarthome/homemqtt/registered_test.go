package homemqtt_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"partnerapi/internal/smarthome"
	"partnerapi/internal/smarthome/homemqtt"
	"partnerapi/internal/smarthome/homesql"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/storetest"
	"partnerapi/internal/testenv"
)

// Through a real broker, on each database: a gate limited to registered
// agents ignores a config under a name that has no agent credential (no
// answer, no state, counted, logged once), answers a registered agent's,
// serves an agent registered while it runs by another Service on the same
// database (the CLI's), stops serving one deleted there and drops its
// state, and holds a registered agent's message that comes while the
// store cannot say whether it is registered.
func TestGateServesOnlyRegisteredAgents(t *testing.T) {
	storetest.Each(t, homesql.Migrate, func(t *testing.T, db *sqldb.DB) {
		url := testenv.MQTTBroker(t)
		ctx := context.Background()
		store := &outageStore{Store: homesql.New(db), err: storetest.UnavailableError(t)}
		svc := smarthome.NewService(store)
		if err := svc.Init(ctx); err != nil {
			t.Fatal(err)
		}
		cli := smarthome.NewService(homesql.New(db))
		if _, err := cli.CreateCredential(ctx, smarthome.KindAgent, "ctl"); err != nil {
			t.Fatal(err)
		}
		reg := prometheus.NewRegistry()
		var logs testenv.LogBuffer
		root := testRoot(t, url)
		g := startGate(t, homemqtt.Config{Broker: url, Root: root, Log: slog.New(slog.NewTextHandler(&logs, nil)),
			Metrics: homemqtt.NewMetrics(reg), Agents: svc}, svc)

		const bad = `{"devices": nope}` // answered on down/errors when checked
		// answered publishes a config under name and reports whether it
		// was answered: within 10 s when an answer is due (want), which
		// a loaded machine may take longer than a second to deliver, and
		// within a second when none is (a second to show one up).
		answered := func(name string, want bool) bool {
			t.Helper()
			a := newAgent(t, url, root+"/"+name+"/down/#")
			defer a.c.Disconnect(0)
			a.publish(root+"/"+name+"/up/config", bad, false)
			wait := time.Second
			if want {
				wait = 10 * time.Second
			}
			select {
			case m := <-a.got:
				if m.Topic() != root+"/"+name+"/down/errors" {
					t.Fatalf("%s: answer on %s %s", name, m.Topic(), m.Payload())
				}
				return true
			case <-time.After(wait):
				return false
			}
		}
		unknown := func() float64 { return metric(t, reg, "partnerapi_smarthome_mqtt_unknown_agent_total", "") }
		// Changes made by another Service are seen within twice
		// smarthome.DefaultRecheck.
		settle := func() { time.Sleep(3 * smarthome.DefaultRecheck) }

		for range 2 {
			if answered("ghost", false) {
				t.Fatal("a config of an agent that is not registered was answered")
			}
		}
		// An ignored message leaves no answer to wait for: the gate is
		// done with both once they are counted and the line is logged
		// (it counts first), which a loaded machine may put off past the
		// second spent looking for an answer.
		waitFor(t, "both ignored messages counted and logged", func() bool {
			return unknown() >= 2 && strings.Contains(logs.String(), "not registered ignored")
		})
		if g.Knows("ghost") || unknown() != 2 {
			t.Fatalf("unregistered agent: state kept %v, unknown_agent_total %v, want none and 2", g.Knows("ghost"), unknown())
		}
		if n := strings.Count(logs.String(), "not registered ignored"); n != 1 {
			t.Errorf("%d log lines of ignored messages, want 1 (once a minute):\n%s", n, logs.String())
		}
		if !answered("ctl", true) || !g.Knows("ctl") {
			t.Fatal("a registered agent's config was not answered")
		}

		if _, err := cli.CreateCredential(ctx, smarthome.KindAgent, "ghost"); err != nil {
			t.Fatal(err)
		}
		settle()
		if !answered("ghost", true) {
			t.Fatal("an agent registered while the gate runs was not served")
		}

		if err := cli.DeleteCredential(ctx, smarthome.KindAgent, "ctl"); err != nil {
			t.Fatal(err)
		}
		settle()
		if answered("ctl", false) {
			t.Fatal("a deleted agent's config was answered")
		}
		// The gate counts the ignored message, then drops the state.
		waitFor(t, "the deleted agent's message ignored and its state dropped", func() bool {
			return unknown() >= 3 && !g.Knows("ctl")
		})
		if g.Knows("ctl") || unknown() != 3 {
			t.Fatalf("deleted agent: state kept %v, unknown_agent_total %v, want none and 3", g.Knows("ctl"), unknown())
		}

		// The store down: whether ghost is registered cannot be read, so
		// its config is held, and answered once the store is back.
		a := newAgent(t, url, root+"/ghost/down/errors")
		store.down.Store(true)
		settle()
		a.publish(root+"/ghost/up/config", bad, false)
		waitFor(t, "the config held", func() bool { return metric(t, reg, "partnerapi_smarthome_mqtt_held", "") == 1 })
		store.down.Store(false)
		if m := a.next(); m.Topic() != root+"/ghost/down/errors" {
			t.Fatalf("after the outage: %s %s", m.Topic(), m.Payload())
		}
		if unknown() != 3 {
			t.Errorf("unknown_agent_total %v after the outage, want 3", unknown())
		}
	})
}

// Through a real broker, with the store up: every message an
// administrator sends to a login without an agent credential is refused
// as not found, nothing reaches the broker and the gate keeps no state
// for the name. With the store down, which cannot say whether the login is
// registered, a message that needs no catalog goes out as it did before
// the check.
func TestGateRefusesAdminSendsToUnregisteredAgents(t *testing.T) {
	url := testenv.MQTTBroker(t)
	store := &outageStore{Store: homesql.New(homeDB(t)), err: storetest.UnavailableError(t)}
	svc := readingService(t, store)
	root := testRoot(t, url)
	g := startGate(t, homemqtt.Config{Broker: url, Root: root, Agents: svc}, svc)
	ghost := newAgent(t, url, root+"/ghost/down/#")
	ctx := context.Background()
	report := []byte(`{"topic":"up/config","errors":["x"]}`)
	for _, c := range []struct{ kind, body string }{
		{"commands", lampOn},
		{smarthome.RenameKind, `{"device_id":"lamp","new_name":"L"}`},
		{smarthome.GroupKind, `{"device_id":"lamp","home":"H","room":"R"}`},
		{smarthome.ErrorsKind, string(report)},
		{smarthome.ConfigRequestKind, `{}`},
	} {
		var err error
		if c.kind == "commands" {
			_, err = g.Command(ctx, "ghost", []byte(c.body))
		} else {
			_, err = g.Send(ctx, "ghost", c.kind, []byte(c.body))
		}
		if !errors.Is(err, smarthome.ErrNotFound) || !strings.Contains(err.Error(), "ghost") {
			t.Errorf("%s to an unregistered agent: %v, want not found naming it", c.kind, err)
		}
	}
	if g.Knows("ghost") {
		t.Error("the gate keeps state for the unregistered name")
	}
	select {
	case m := <-ghost.got:
		t.Fatalf("the unregistered name got %s %s", m.Topic(), m.Payload())
	case <-time.After(300 * time.Millisecond):
	}

	store.down.Store(true)
	if _, err := g.Send(ctx, "ghost", smarthome.ErrorsKind, report); err != nil {
		t.Fatalf("an error report with the store down: %v, want sent", err)
	}
	if m := ghost.next(); m.Topic() != root+"/ghost/down/errors" {
		t.Fatalf("with the store down the name got %s %s", m.Topic(), m.Payload())
	}
}
