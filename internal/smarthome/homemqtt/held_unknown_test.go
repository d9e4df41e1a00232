package homemqtt_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"partnerapi/internal/smarthome"
	"partnerapi/internal/smarthome/homemqtt"
	"partnerapi/internal/smarthome/homesql"
	"partnerapi/internal/storetest"
	"partnerapi/internal/testenv"
)

// Through a real broker, with the gate's SQLite store failing and then
// recovering, no agent having published before the outage: the gate read
// the registered set when it started (or, the store down then, in the
// background once it came back), so during the outage the messages under
// names not in it (an agent registered meanwhile by the CLI's Service,
// which still reaches the database, and made-up ones) are held under
// their own bound of 100: a flood beyond it cannot push out the
// registered agent's held config, which is answered once the store is
// back, and a few made-up names leave the new agent's config held too,
// answered then (whether the set was read at start or again at the
// registered agent's message before the outage). With no set ever read (the store down since the gate
// started), every message is held under the main bound, since nothing
// tells made-up names from agents.
func TestGateOutageFloodOfUnknownAgents(t *testing.T) {
	const bad = `{"devices": nope}`
	for _, tc := range []struct {
		name string
		// downAtStart: the store is down when the gate starts; upBefore:
		// it comes back (and the gate reads the set) before the outage.
		downAtStart, upBefore bool
		flood                 int
		wantHeld, wantUnknown float64
		freshAnswered         bool // the agent registered during the outage
		// devFirst: the registered agent publishes before the outage too.
		devFirst bool
	}{
		{name: "set read at start, flood beyond the bound", flood: 1100, wantHeld: 1 + 100, wantUnknown: 100},
		{name: "set read at start, a few made-up names", flood: 10, wantHeld: 1 + 1 + 10, wantUnknown: 10, freshAnswered: true},
		{name: "set read again, a few made-up names", flood: 10, wantHeld: 1 + 1 + 10, wantUnknown: 10, freshAnswered: true, devFirst: true},
		{name: "set read in the background after a failed start", downAtStart: true, upBefore: true, flood: 1100, wantHeld: 1 + 100, wantUnknown: 100},
		{name: "no set ever read", downAtStart: true, flood: 1100, wantHeld: 1000, wantUnknown: 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := testenv.MQTTBroker(t)
			ctx := context.Background()
			db := homeDB(t)
			store := &outageStore{Store: homesql.New(db), err: storetest.UnavailableError(t)}
			svc := readingService(t, store)
			cli := smarthome.NewService(homesql.New(db))
			if _, err := cli.CreateCredential(ctx, smarthome.KindAgent, "dev"); err != nil {
				t.Fatal(err)
			}
			reg := prometheus.NewRegistry()
			var logs testenv.LogBuffer
			root := testRoot(t, url)
			store.down.Store(tc.downAtStart)
			startGate(t, homemqtt.Config{Broker: url, Root: root, Log: slog.New(slog.NewTextHandler(&logs, nil)),
				Metrics: homemqtt.NewMetrics(reg), Agents: svc}, svc)
			held := func() float64 { return metric(t, reg, "partnerapi_smarthome_mqtt_held", "") }
			unknown := func() float64 { return metric(t, reg, "partnerapi_smarthome_mqtt_unknown_agent_total", "") }
			if tc.upBefore {
				store.down.Store(false)
				waitFor(t, "the set read in the background", func() bool { return strings.Contains(logs.String(), "the registered agents read") })
			}

			dev := newAgent(t, url, root+"/dev/down/errors")
			if tc.devFirst {
				dev.publish(root+"/dev/up/config", bad, false)
				dev.next()
			}
			store.down.Store(true)
			if _, err := cli.CreateCredential(ctx, smarthome.KindAgent, "fresh"); err != nil {
				t.Fatal(err)
			}
			fresh := newAgent(t, url, root+"/fresh/down/errors")
			fresh.publish(root+"/fresh/up/config", bad, false)
			waitFor(t, "the new agent's config held", func() bool { return held() == 1 })
			dev.publish(root+"/dev/up/config", bad, false)
			junk := newAgent(t, url)
			for i := range tc.flood {
				junk.publish(fmt.Sprintf("%s/junk%04d/up/config", root, i), `{"devices":[]}`, false)
			}
			waitFor(t, "the flood held or dropped", func() bool {
				return held()+metric(t, reg, "partnerapi_smarthome_mqtt_held_dropped_total", "") == float64(2+tc.flood)
			})
			if held() != tc.wantHeld || unknown() != 0 {
				t.Fatalf("%v messages held during the flood, unknown_agent_total %v; want %v and 0", held(), unknown(), tc.wantHeld)
			}

			store.down.Store(false)
			waitFor(t, "the held messages checked", func() bool { return held() == 0 })
			if unknown() != tc.wantUnknown {
				t.Fatalf("unknown_agent_total %v after recovery, want %v", unknown(), tc.wantUnknown)
			}
			if tc.downAtStart && !tc.upBefore {
				return // the registered agent's config was pushed out
			}
			if m := dev.next(); m.Topic() != root+"/dev/down/errors" {
				t.Fatalf("the registered agent after the outage: %s %s", m.Topic(), m.Payload())
			}
			// An answer due is waited for up to 10 s (it goes out around
			// the registered agent's, and a loaded machine may deliver it
			// later than a fixed second); one not due is looked for for a
			// second.
			wait := time.Second
			if tc.freshAnswered {
				wait = 10 * time.Second
			}
			select {
			case m := <-fresh.got:
				if !tc.freshAnswered {
					t.Fatalf("the new agent's config, pushed out, was answered: %s", m.Payload())
				}
			case <-time.After(wait):
				if tc.freshAnswered {
					t.Fatal("the new agent's config held during the outage was not answered")
				}
			}
		})
	}
}

// Through a real broker, with the gate's store down and a registered
// agent's config held: messages under names no credential can have (a
// space, a character outside the login alphabet, 129 bytes) are ignored at
// once and counted as unknown, not held under the unknown names' bound
// until the store is back.
func TestGateIgnoresImpossibleAgentNamesDuringAnOutage(t *testing.T) {
	url := testenv.MQTTBroker(t)
	ctx := context.Background()
	db := homeDB(t)
	store := &outageStore{Store: homesql.New(db), err: storetest.UnavailableError(t)}
	svc := readingService(t, store)
	if _, err := svc.CreateCredential(ctx, smarthome.KindAgent, "dev"); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	root := testRoot(t, url)
	startGate(t, homemqtt.Config{Broker: url, Root: root, Metrics: homemqtt.NewMetrics(reg), Agents: svc}, svc)
	held := func() float64 { return metric(t, reg, "partnerapi_smarthome_mqtt_held", "") }
	unknown := func() float64 { return metric(t, reg, "partnerapi_smarthome_mqtt_unknown_agent_total", "") }

	store.down.Store(true)
	dev := newAgent(t, url, root+"/dev/down/errors")
	dev.publish(root+"/dev/up/config", `{"devices": nope}`, false)
	waitFor(t, "the agent's config held", func() bool { return held() == 1 })
	junk := newAgent(t, url)
	names := []string{"bad name", "a$b", "ünïcode", strings.Repeat("x", 129)}
	for _, name := range names {
		junk.publish(root+"/"+name+"/up/config", `{"devices":[]}`, false)
	}
	waitFor(t, "the impossible names counted as unknown", func() bool { return unknown() == float64(len(names)) })
	if held() != 1 {
		t.Fatalf("%v messages held, want the registered agent's only", held())
	}
	store.down.Store(false)
	if m := dev.next(); m.Topic() != root+"/dev/down/errors" {
		t.Fatalf("the registered agent after the outage: %s %s", m.Topic(), m.Payload())
	}
	if unknown() != float64(len(names)) {
		t.Fatalf("unknown_agent_total %v after the outage, want %d", unknown(), len(names))
	}
}
