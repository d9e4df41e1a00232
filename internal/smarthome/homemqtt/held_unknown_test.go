package homemqtt_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"partnerapi/internal/smarthome"
	"partnerapi/internal/smarthome/homemqtt"
	"partnerapi/internal/smarthome/homesql"
	"partnerapi/internal/storetest"
	"partnerapi/internal/testenv"
)

// Through a real broker, with the SQLite store failing and then
// recovering: during an outage, a flood of messages under made-up names,
// more than the held bound, is ignored and counted as unknown against the
// registered set the gate read before the outage, so it does not push out
// a registered agent's held config, which is answered once the store is
// back. With no set ever read (the store down since the gate started),
// made-up names are held as before, since nothing tells them from agents.
func TestGateOutageFloodOfUnknownAgents(t *testing.T) {
	const flood = 1100 // beyond the 1 000 messages held
	const bad = `{"devices": nope}`
	for _, tc := range []struct {
		name      string
		readFirst bool // a registered agent's message is checked before the outage
		wantHeld  float64
	}{
		{name: "set read before the outage", readFirst: true, wantHeld: 1},
		{name: "no set ever read", readFirst: false, wantHeld: 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := testenv.MQTTBroker(t)
			db := homeDB(t)
			store := &outageStore{Store: homesql.New(db), err: storetest.UnavailableError(t)}
			svc := readingService(t, store)
			if _, err := svc.CreateCredential(context.Background(), smarthome.KindAgent, "dev"); err != nil {
				t.Fatal(err)
			}
			reg := prometheus.NewRegistry()
			var logs testenv.LogBuffer
			root := testRoot(t, url)
			startGate(t, homemqtt.Config{Broker: url, Root: root, Log: slog.New(slog.NewTextHandler(&logs, nil)),
				Metrics: homemqtt.NewMetrics(reg), Agents: svc}, svc)
			held := func() float64 { return metric(t, reg, "partnerapi_smarthome_mqtt_held", "") }
			unknown := func() float64 { return metric(t, reg, "partnerapi_smarthome_mqtt_unknown_agent_total", "") }

			dev := newAgent(t, url, root+"/dev/down/errors")
			if tc.readFirst {
				dev.publish(root+"/dev/up/config", bad, false)
				if m := dev.next(); m.Topic() != root+"/dev/down/errors" {
					t.Fatalf("before the outage: %s %s", m.Topic(), m.Payload())
				}
			}

			store.down.Store(true)
			dev.publish(root+"/dev/up/config", bad, false)
			waitFor(t, "the config held", func() bool { return held() == 1 })
			junk := newAgent(t, url)
			for i := range flood {
				junk.publish(fmt.Sprintf("%s/junk%04d/up/config", root, i), `{"devices":[]}`, false)
			}
			if tc.readFirst {
				waitFor(t, "the flood counted as unknown", func() bool { return unknown() == flood })
			} else {
				waitFor(t, "the flood held", func() bool {
					return metric(t, reg, "partnerapi_smarthome_mqtt_held_dropped_total", "") == flood+1-1000
				})
				if unknown() != 0 {
					t.Fatalf("unknown_agent_total %v with no set ever read, want 0", unknown())
				}
			}
			if held() != tc.wantHeld {
				t.Fatalf("%v messages held during the flood, want %v", held(), tc.wantHeld)
			}

			store.down.Store(false)
			if !tc.readFirst {
				// The config was pushed out; after recovery the
				// made-up names are ignored as they are checked.
				waitFor(t, "the held flood checked", func() bool { return held() == 0 })
				if unknown() != 1000 {
					t.Fatalf("unknown_agent_total %v after recovery, want 1000", unknown())
				}
				return
			}
			if m := dev.next(); m.Topic() != root+"/dev/down/errors" {
				t.Fatalf("after the outage: %s %s", m.Topic(), m.Payload())
			}
			waitFor(t, "nothing held", func() bool { return held() == 0 })
			if v := metric(t, reg, "partnerapi_smarthome_mqtt_held_dropped_total", ""); v != 0 {
				t.Errorf("held_dropped_total %v, want 0", v)
			}
		})
	}
}
