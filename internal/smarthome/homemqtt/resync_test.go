package homemqtt_test

import (
	"context"
	"errors"
	"os"
	"testing"

	"partnerapi/internal/smarthome"
	"partnerapi/internal/smarthome/homemqtt"
	"partnerapi/internal/testenv"
)

// After its broker restarts, the gate asks every agent it knows for its
// whole config (down/config_request), since what the agents published
// while it was away is lost; the answer replaces the agent's devices, so
// a plug taken off the controller meanwhile is forgotten and a command to
// it refused.
func TestGateAsksForConfigsAfterReconnecting(t *testing.T) {
	broker := testenv.StartMosquitto(t)
	url := broker.URL()
	g := startGate(t, homemqtt.Config{Broker: url}, seeded(t))
	const plug = `{"id":"plug","name":"Plug","default_name":"Plug","model":{"id":"m2","manufacturer":"M","model":"S","category":"socket","features":["online","on_off"]}}`
	root := homemqtt.DefaultRoot
	before := newAgent(t, url, root+"/dev/down/status_request")
	before.publish(root+"/dev/up/config", `{"devices":[`+lamp+`,`+plug+`]}`, false)
	if m := before.next(); string(m.Payload()) != `{"devices":["lamp","plug"]}` {
		t.Fatalf("status_request after the config: %s", m.Payload())
	}

	broker.Stop(os.Kill)
	waitFor(t, "the gate notices the loss", func() bool { return !g.Connected() })
	broker.Start()
	// Subscribe before the gate is back (its backoff is a second by now),
	// so that the request is seen.
	a := newAgent(t, url, root+"/dev/down/config_request", root+"/dev/down/status_request")
	if g.Connected() {
		t.Fatal("the gate reconnected before the agent subscribed: its request could go unseen")
	}
	waitFor(t, "the gate reconnects", g.Connected)
	if m := a.next(); m.Topic() != root+"/dev/down/config_request" || string(m.Payload()) != "{}" {
		t.Fatalf("after the reconnection the agent got %s %s, want a config_request", m.Topic(), m.Payload())
	}
	a.publish(root+"/dev/up/config", `{"devices":[`+lamp+`]}`, false)
	// The request goes out at QoS 1, at least once: a broker or a client
	// library may hand the agent a second copy (paho resends a publish in
	// flight when its connection drops, its issue #703), which an agent
	// answers like the first. Such copies are let through; the status
	// request must still follow the answer.
	m := a.next()
	for i := 0; i < 3 && m.Topic() == root+"/dev/down/config_request" && string(m.Payload()) == "{}"; i++ {
		m = a.next()
	}
	if m.Topic() != root+"/dev/down/status_request" || string(m.Payload()) != `{"devices":["lamp"]}` {
		t.Fatalf("status_request after the answer: %s %s", m.Topic(), m.Payload())
	}
	var inv *smarthome.InvalidError
	if _, err := g.Command(context.Background(), "dev", []byte(`{"devices":{"plug":{"states":[{"key":"on_off","value":{"type":"BOOL","bool_value":true}}]}}}`)); !errors.As(err, &inv) {
		t.Fatalf("command to the plug the answer left out: %v, want refused", err)
	}
	if _, err := g.Command(context.Background(), "dev", []byte(lampOn)); err != nil {
		t.Fatalf("command to the lamp: %v", err)
	}
}
