package homemqtt_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"partnerapi/internal/smarthome"
	"partnerapi/internal/smarthome/homemqtt"
	"partnerapi/internal/testenv"
)

type seedCatalog struct{ c *smarthome.Catalog }

func (s seedCatalog) Catalog(context.Context) (*smarthome.Catalog, error) { return s.c, nil }

// seeded is the catalog the service starts with, as a gate reads it.
func seeded(t *testing.T) seedCatalog {
	t.Helper()
	c, err := smarthome.Seed()
	if err != nil {
		t.Fatal(err)
	}
	return seedCatalog{c}
}

// testRoot is a topic root of the test's own on the shared broker at url,
// so that tests running one after another do not hear each other. The
// broker keeps retained messages: the root's global configuration goes
// when the test ends (an empty retained message clears it), after the
// gate started later has closed.
func testRoot(t *testing.T, url string) string {
	t.Helper()
	root := fmt.Sprintf("partnerapi-test-%d", time.Now().UnixNano())
	t.Cleanup(func() { newAgent(t, url).publish(root+"/__config", "", true) })
	return root
}

// startGate starts a gate with cfg (its Endpoint http://127.0.0.1:9445
// when unset) reading cat, and waits until it has subscribed, so that what
// an agent publishes next is heard. The gate closes when the test ends.
func startGate(t *testing.T, cfg homemqtt.Config, cat homemqtt.Catalogs) *homemqtt.Gate {
	t.Helper()
	if cfg.Endpoint == "" {
		cfg.Endpoint = "http://127.0.0.1:9445"
	}
	g, err := homemqtt.Start(cfg, cat)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	waitFor(t, "the gate to subscribe", g.Connected)
	return g
}

// agent is a test agent connected to the broker: what arrives on the topics
// it subscribed to, and publish.
type agent struct {
	t   *testing.T
	c   mqtt.Client
	got chan mqtt.Message
}

func newAgent(t *testing.T, url string, topics ...string) *agent {
	t.Helper()
	// Room for a stream of answers read only after it was sent: a full
	// channel would block the client's goroutine, its acknowledgements
	// with it.
	a := &agent{t: t, got: make(chan mqtt.Message, 128)}
	a.c = mqtt.NewClient(mqtt.NewClientOptions().AddBroker(url).SetClientID(fmt.Sprintf("agent-%d", time.Now().UnixNano())))
	if tok := a.c.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("agent connect: %v", tok.Error())
	}
	t.Cleanup(func() { a.c.Disconnect(100) })
	for _, topic := range topics {
		if tok := a.c.Subscribe(topic, 1, func(_ mqtt.Client, m mqtt.Message) { a.got <- m }); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			t.Fatalf("subscribe %s: %v", topic, tok.Error())
		}
	}
	return a
}

func (a *agent) publish(topic, body string, retained bool) {
	a.t.Helper()
	if tok := a.c.Publish(topic, 1, retained, body); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		a.t.Fatalf("publish %s: %v", topic, tok.Error())
	}
}

func (a *agent) next() mqtt.Message {
	a.t.Helper()
	select {
	case m := <-a.got:
		return m
	case <-time.After(10 * time.Second):
		a.t.Fatal("nothing arrived in 10 s")
		return nil
	}
}

const lamp = `{"id":"lamp","name":"Lamp","default_name":"Lamp","model":{"id":"m1","manufacturer":"M","model":"L","category":"light","features":["online","on_off","light_brightness"]}}`

// Through a real broker: an agent finds the information API's endpoint in
// the retained global configuration, and each of its messages with a
// finding gets one answer on its down/errors (a feature outside the
// device's category, a malformed body, a status value of the wrong type),
// while a valid message gets none: the answer that follows a valid config
// is the next message's.
func TestGateThroughBroker(t *testing.T) {
	url := testenv.MQTTBroker(t)
	root := testRoot(t, url)
	g := startGate(t, homemqtt.Config{Broker: url, Root: root}, seeded(t))
	// The retained configuration reaches an agent that subscribes later.
	var cfg struct {
		Endpoint string `json:"http_api_endpoint"`
	}
	deadline := time.Now().Add(10 * time.Second)
	for cfg.Endpoint == "" && time.Now().Before(deadline) {
		a := newAgent(t, url, root+"/__config")
		select {
		case m := <-a.got:
			// A subscription made before the gate published gets the
			// message live; the next, made after, gets the retained copy.
			if !m.Retained() {
				continue
			}
			if err := json.Unmarshal(m.Payload(), &cfg); err != nil {
				t.Fatalf("config %q: %v", m.Payload(), err)
			}
		case <-time.After(500 * time.Millisecond): // published after this subscription began
		}
	}
	if cfg.Endpoint != "http://127.0.0.1:9445" {
		t.Fatalf("http_api_endpoint %q", cfg.Endpoint)
	}

	// An agent whose status comes first is asked for its config, once.
	early := newAgent(t, url, root+"/dev0/down/config_request")
	for range 2 {
		early.publish(root+"/dev0/up/status", `{"devices":{"lamp":{"states":[]}}}`, false)
	}
	if m := early.next(); string(m.Payload()) != "{}" {
		t.Fatalf("config_request %q", m.Payload())
	}

	dev := newAgent(t, url, root+"/dev1/down/errors")
	requests := newAgent(t, url, root+"/dev1/down/status_request")
	answer := func(topic, body string) homemqtt.Message {
		t.Helper()
		dev.publish(root+"/dev1/"+topic, body, false)
		var msg homemqtt.Message
		if err := json.Unmarshal(dev.next().Payload(), &msg); err != nil {
			t.Fatal(err)
		}
		return msg
	}
	bad := `{"devices":[` + lamp + `,{"id":"plug","name":"P","default_name":"P","model":{"id":"m2","manufacturer":"M","model":"S","category":"socket","features":["online","on_off","light_colour"]}}]}`
	if msg := answer("up/config", bad); msg.Topic != "up/config" || len(msg.Devices) != 1 || msg.Devices[0].ID != "plug" ||
		len(msg.Devices[0].UnknownFeatures) != 1 || msg.Devices[0].UnknownFeatures[0] != "light_colour" {
		t.Fatalf("bad config answered %+v", msg)
	}
	if msg := answer("up/config", `{"devices": nope}`); msg.Topic != "up/config" || len(msg.Errors) == 0 {
		t.Fatalf("malformed config answered %+v", msg)
	}
	// A config with findings is still read: both its devices, whose
	// categories the catalog has, are asked for (the plug's finding is a
	// feature). The malformed one asks for nothing: the next request is
	// the valid config's, the lamp alone.
	if m := requests.next(); string(m.Payload()) != `{"devices":["lamp","plug"]}` {
		t.Fatalf("status_request after the first config: %q", m.Payload())
	}
	dev.publish(root+"/dev1/up/config", `{"devices":[`+lamp+`]}`, false)
	if m := requests.next(); string(m.Payload()) != `{"devices":["lamp"]}` {
		t.Fatalf("status_request after the valid config: %q", m.Payload())
	}
	status := `{"devices":{"lamp":{"states":[{"key":"on_off","value":{"type":"INTEGER","integer_value":"1"}}]}}}`
	if msg := answer("up/status", status); msg.Topic != "up/status" || len(msg.Devices) != 1 || msg.Devices[0].ID != "lamp" ||
		msg.Devices[0].Category != "light" || len(msg.Devices[0].InvalidValues) != 1 {
		t.Fatalf("bad status answered %+v (a valid config must not be answered)", msg)
	}
	select {
	case m := <-early.got:
		t.Fatalf("a second config_request: %q", m.Payload())
	default:
	}
	// A command's agent is one topic level: wildcards and separators
	// would publish elsewhere.
	var inv *smarthome.InvalidError
	for _, bad := range []string{"", "a/b", "a+", "#"} {
		if _, err := g.Command(context.Background(), bad, []byte(`{"devices":{}}`)); !errors.As(err, &inv) {
			t.Errorf("agent %q: %v, want InvalidError", bad, err)
		}
		if _, err := g.Send(context.Background(), bad, smarthome.RenameKind, []byte(`{"device_id":"lamp","new_name":"L"}`)); !errors.As(err, &inv) {
			t.Errorf("rename for agent %q: %v, want InvalidError", bad, err)
		}
	}
	// Send publishes only the app's changes and error reports: a command
	// through it would skip the checks of Command.
	if _, err := g.Send(context.Background(), "dev", "commands", []byte(`{"devices":{}}`)); err == nil || errors.As(err, &inv) {
		t.Errorf("a command through Send: %v, want refused as no message of Send's", err)
	}
}

// After its broker restarts (losing retained messages and subscriptions),
// the gate reconnects by itself, publishes the global configuration again
// and answers agents as before.
func TestGateSurvivesBrokerRestart(t *testing.T) {
	broker := testenv.StartMosquitto(t)
	url := broker.URL()
	startGate(t, homemqtt.Config{Broker: url}, seeded(t))
	broker.Stop(os.Kill)
	broker.Start()
	root := homemqtt.DefaultRoot
	deadline := time.Now().Add(30 * time.Second)
	for {
		a := newAgent(t, url, root+"/__config")
		select {
		case m := <-a.got:
			if !strings.Contains(string(m.Payload()), "http://127.0.0.1:9445") {
				t.Fatalf("config after the restart: %q", m.Payload())
			}
		case <-time.After(time.Second):
			if time.Now().After(deadline) {
				t.Fatal("no configuration 30 s after the broker restarted")
			}
			continue
		}
		break
	}
	dev := newAgent(t, url, root+"/dev/down/errors")
	dev.publish(root+"/dev/up/config", `{"devices":[{"id":"x","model_id":"nope"}]}`, false)
	if m := dev.next(); !strings.Contains(string(m.Payload()), "nope") {
		t.Fatalf("answer after the restart: %q", m.Payload())
	}
}

// Through a real broker: a config that gives a model id other features
// than the agent's earlier config gave it is answered on down/errors with
// the model_conflict warning (the provider would keep showing the model
// it cached by id), and its devices' states are still asked for; the
// same features again are not answered.
func TestGateReportsModelConflictAcrossConfigs(t *testing.T) {
	url := testenv.MQTTBroker(t)
	root := testRoot(t, url)
	startGate(t, homemqtt.Config{Broker: url, Root: root}, seeded(t))
	const lamp = `{"devices":[{"id":"lamp","name":"Lamp","default_name":"Lamp","model":{"id":"m1","manufacturer":"M","model":"L","category":"light","features":[%s]}}]}`
	errs := newAgent(t, url, root+"/ctl/down/errors")
	asked := newAgent(t, url, root+"/ctl/down/status_request")
	errs.publish(root+"/ctl/up/config", fmt.Sprintf(lamp, `"online","on_off"`), false)
	asked.next()
	errs.publish(root+"/ctl/up/config", fmt.Sprintf(lamp, `"online","on_off","light_brightness"`), false)
	var msg homemqtt.Message
	if err := json.Unmarshal(errs.next().Payload(), &msg); err != nil {
		t.Fatal(err)
	}
	if len(msg.Errors) != 0 || len(msg.Devices) != 1 || msg.Devices[0].ID != "lamp" || len(msg.Devices[0].Warnings) != 1 ||
		msg.Devices[0].Warnings[0].Reason != smarthome.ReasonModelConflict {
		t.Fatalf("answer to the changed model: %+v", msg)
	}
	if m := asked.next(); string(m.Payload()) != `{"devices":["lamp"]}` {
		t.Fatalf("status_request after the changed model: %s", m.Payload())
	}
	errs.publish(root+"/ctl/up/config", fmt.Sprintf(lamp, `"online","on_off","light_brightness"`), false)
	asked.next()
	select {
	case m := <-errs.got:
		t.Fatalf("the same model again answered: %s", m.Payload())
	case <-time.After(300 * time.Millisecond):
	}
}
