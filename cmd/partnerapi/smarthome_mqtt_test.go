package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"partnerapi/internal/testenv"
)

// subscribedAgent is an MQTT client playing an agent, connected to broker
// as clientID until the test ends and subscribed to topics: what arrives
// on them comes out of the channel, which has room for a burst read later.
func subscribedAgent(t *testing.T, broker, clientID string, topics ...string) (mqtt.Client, chan mqtt.Message) {
	t.Helper()
	got := make(chan mqtt.Message, 16)
	c := mqtt.NewClient(mqtt.NewClientOptions().AddBroker(broker).SetClientID(clientID))
	if tok := c.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("agent connect: %v", tok.Error())
	}
	t.Cleanup(func() { c.Disconnect(100) })
	for _, topic := range topics {
		if tok := c.Subscribe(topic, 1, func(_ mqtt.Client, m mqtt.Message) { got <- m }); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			t.Fatalf("subscribe %s: %v", topic, tok.Error())
		}
	}
	return c, got
}

// clearRetainedAfter removes, when the test ends, the retained global
// configuration a gate under root leaves on the broker, which keeps
// retained messages across restarts.
func clearRetainedAfter(t *testing.T, broker, root string) {
	t.Cleanup(func() {
		c := mqtt.NewClient(mqtt.NewClientOptions().AddBroker(broker).SetClientID(root + "-cleanup"))
		if tok := c.Connect(); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
			t.Logf("clearing %s/__config: %v", root, tok.Error())
			return
		}
		c.Publish(root+"/__config", 1, true, "").WaitTimeout(5 * time.Second)
		c.Disconnect(100)
	})
}

// --smarthome-mqtt through serve, its SQLite store and a real broker: an
// agent learns the smart home listener's address from the global
// configuration and reads the API there with its credentials; an up/config
// naming a model an administrator has just added through the admin API is
// not answered, one naming an unknown model is answered on down/errors, as
// is a device whose inline model has a feature outside its category.
func TestSmarthomeMQTTGate(t *testing.T) {
	broker := testenv.MQTTBroker(t)
	root := fmt.Sprintf("partnerapi-serve-test-%d", time.Now().UnixNano())
	c, got := subscribedAgent(t, broker, root, root+"/__config", root+"/agent-m/down/errors", root+"/agent-m/down/commands")
	clearRetainedAfter(t, broker, root)
	next := func(topic string) []byte {
		t.Helper()
		select {
		case m := <-got:
			if m.Topic() != topic {
				t.Fatalf("got %s %s, want a message on %s", m.Topic(), m.Payload(), topic)
			}
			return m.Payload()
		case <-time.After(10 * time.Second):
			t.Fatalf("nothing on %s in 10 s", topic)
			return nil
		}
	}
	publish := func(body string) {
		t.Helper()
		if tok := c.Publish(root+"/agent-m/up/config", 1, false, body); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			t.Fatal(tok.Error())
		}
	}

	ts := startServer(t, "--only", "smarthome", "--smarthome-mqtt", broker, "--smarthome-mqtt-root", root)
	var cfg struct {
		Endpoint string `json:"http_api_endpoint"`
	}
	if err := json.Unmarshal(next(root+"/__config"), &cfg); err != nil || cfg.Endpoint != ts.urls["smarthome"] {
		t.Fatalf("http_api_endpoint %q (%v), want the listener %s", cfg.Endpoint, err, ts.urls["smarthome"])
	}
	agent := provision(t, ts.dataDir, "agent", "agent-m")
	admin := provision(t, ts.dataDir, "admin", "root")
	agent.base, admin.base = cfg.Endpoint, cfg.Endpoint
	if resp, body := agent.do("GET", "/v1/mqtt-gate/categories", nil); resp.StatusCode != 200 {
		t.Fatalf("categories at the announced endpoint: %d %s", resp.StatusCode, body)
	}
	model := `{"manufacturer":"Acme","model":"S1","category":"socket","features":["online","on_off"]}`
	if resp, body := admin.do("PUT", "/v1/admin/models/acme-s1", []byte(model)); resp.StatusCode != 201 {
		t.Fatalf("put model: %d %s", resp.StatusCode, body)
	}
	device := func(id, model string) string {
		return `{"id":"` + id + `","name":"` + id + `","default_name":"` + id + `",` + model + `}`
	}
	publish(`{"devices":[` + device("plug", `"model_id":"acme-s1"`) + `]}`)
	publish(`{"devices":[` + device("plug", `"model_id":"acme-s2"`) + `,` +
		device("lamp", `"model":{"id":"l1","manufacturer":"M","model":"L","category":"light","features":["online","on_off","temperature"]}`) + `]}`)
	// The first config was valid, so the first answer is the second's.
	var msg struct {
		Topic   string
		Devices []struct {
			ID              string
			Errors          []string
			UnknownFeatures []string `json:"unknown_features"`
		}
	}
	if err := json.Unmarshal(next(root+"/agent-m/down/errors"), &msg); err != nil {
		t.Fatal(err)
	}
	if len(msg.Devices) != 2 || msg.Topic != "up/config" ||
		msg.Devices[0].ID != "plug" || len(msg.Devices[0].Errors) != 1 || !strings.Contains(msg.Devices[0].Errors[0], "acme-s2") ||
		msg.Devices[1].ID != "lamp" || len(msg.Devices[1].UnknownFeatures) != 1 || msg.Devices[1].UnknownFeatures[0] != "temperature" {
		t.Fatalf("down/errors %+v", msg)
	}
	// The admin API's commands reach the agent once checked against its
	// configured devices (the last config made the lamp a light, which has
	// on_off and no temperature), rebuilt in the canonical encoding: the
	// stray fields the administrator sent are not.
	command := `{"devices":{"lamp":{"states":[{"key":"on_off","value":{"type":"BOOL","bool_value":true,"integer_value":1}}]}},"extra":true}`
	resp, body := admin.do("POST", "/v1/admin/agents/agent-m/commands", []byte(command))
	if resp.StatusCode != 202 || !strings.Contains(string(body), root+"/agent-m/down/commands") {
		t.Fatalf("command: %d %s", resp.StatusCode, body)
	}
	want := `{"devices":{"lamp":{"states":[{"key":"on_off","value":{"type":"BOOL","bool_value":true}}]}}}`
	if got := next(root + "/agent-m/down/commands"); string(got) != want {
		t.Fatalf("down/commands %q, want %q", got, want)
	}
	resp, body = admin.do("POST", "/v1/admin/agents/agent-m/commands",
		[]byte(`{"devices":{"ghost":{"states":[{"key":"on_off","value":{"type":"BOOL","bool_value":true}}]}}}`))
	if resp.StatusCode != 400 || !strings.Contains(string(body), "device 'ghost' is not a device of the agent's config") {
		t.Fatalf("command to a device never configured: %d %s", resp.StatusCode, body)
	}
	resp, body = admin.do("POST", "/v1/admin/agents/agent-m/commands",
		[]byte(`{"devices":{"lamp":{"states":[{"key":"temperature","value":{"type":"INTEGER","integer_value":"200"}}]}}}`))
	if resp.StatusCode != 400 || !strings.Contains(string(body), "device 'lamp': feature 'temperature' is not in category 'light'") {
		t.Fatalf("command outside the lamp's category: %d %s", resp.StatusCode, body)
	}
	select {
	case m := <-got:
		t.Fatalf("a refused command was sent: %s %s", m.Topic(), m.Payload())
	case <-time.After(300 * time.Millisecond):
	}
}

// A broker address that is not a URL of a supported scheme ends serve
// before it listens.
func TestSmarthomeMQTTFlagChecked(t *testing.T) {
	for _, bad := range []string{"127.0.0.1:1883", "http://127.0.0.1:1883", "tcp://", "mqtt://gate:s3cret-pw@127.0.0.1:1883"} {
		err := serve(t.Context(), []string{"--only", "smarthome", "--data-dir", t.TempDir(), "--smarthome-addr", "127.0.0.1:0", "--smarthome-mqtt", bad},
			func(string) string { return "" }, stdio{in: strings.NewReader(""), out: &strings.Builder{}, err: &strings.Builder{}}, nil)
		if err == nil || !strings.Contains(err.Error(), "--smarthome-mqtt") {
			t.Errorf("%q: %v", bad, err)
		}
		// The refusal is printed: a password in the value must not be.
		if err != nil && strings.Contains(err.Error(), "s3cret-pw") {
			t.Errorf("the refusal shows the broker's password: %v", err)
		}
	}
}
