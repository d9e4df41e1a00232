package homeapi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"partnerapi/internal/smarthome"
	"partnerapi/internal/smarthome/homemqtt"
	"partnerapi/internal/testenv"
	"partnerapi/internal/web"
)

// gateServers is the smart-home API over one SQLite store twice, with the
// MQTT gate on a private Mosquitto (gated) and without one (gateless), the
// administrator root and agent dev, whose last up/config announced a lamp.
type gateServers struct {
	broker           *testenv.Mosquitto
	svc              *smarthome.Service
	gate             *homemqtt.Gate
	adminPW, agentPW string
	gated, gateless  string
}

func newGateServers(t *testing.T) *gateServers {
	t.Helper()
	f := &gateServers{broker: testenv.StartMosquitto(t)}
	ctx := context.Background()
	f.svc = newTestService(t)
	var err error
	if f.adminPW, err = f.svc.CreateCredential(ctx, smarthome.KindAdmin, "root"); err != nil {
		t.Fatal(err)
	}
	if f.agentPW, err = f.svc.CreateCredential(ctx, smarthome.KindAgent, "dev"); err != nil {
		t.Fatal(err)
	}
	// An agent registered that never sent a config.
	if _, err = f.svc.CreateCredential(ctx, smarthome.KindAgent, "other"); err != nil {
		t.Fatal(err)
	}
	// Limited to the registered agents, as serve's gate is by default.
	f.gate, err = homemqtt.Start(homemqtt.Config{Broker: f.broker.URL(), Endpoint: "http://127.0.0.1:9445",
		Log: slog.New(slog.DiscardHandler), Agents: f.svc}, f.svc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.gate.Close)
	serve := func(cmd smarthome.Commander) string {
		api := web.API{Name: "smarthome", Handler: NewServer(Deps{Service: f.svc, Commander: cmd, Log: slog.New(slog.DiscardHandler)}), Errors: ErrorWriter()}
		srv := httptest.NewServer(api.Build(slog.New(slog.DiscardHandler), nil))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	f.gated, f.gateless = serve(f.gate), serve(nil)
	configureLamp(t, f.broker.URL(), f.gate)
	return f
}

// A command refused because the gate is away for the moment and one
// refused because this deployment has no gate are different answers,
// through HTTP against a private Mosquitto: while the broker is down, a
// sound command is 503 with a Retry-After of the gate's reconnection cap
// and a message saying the broker is unreachable, so that a client waits
// and sends it again; on a server without the gate it is 404, a feature
// not offered, without Retry-After, since sending it again cannot help.
// Once the broker is back the same command is taken (202).
func TestCommandRefusalsTellTransientFromPermanent(t *testing.T) {
	f := newGateServers(t)
	broker, g, pw, gated, gateless := f.broker, f.gate, f.adminPW, f.gated, f.gateless

	const command = `{"devices":{"lamp":{"states":[{"key":"on_off","value":{"type":"BOOL","bool_value":true}}]}}}`
	send := func(base string) (*http.Response, errorBody) {
		t.Helper()
		req, _ := http.NewRequest("POST", base+"/v1/admin/agents/dev/commands", strings.NewReader(command))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("root:"+pw)))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body errorBody
		_ = json.NewDecoder(resp.Body).Decode(&body)
		return resp, body
	}
	if resp, body := send(gated); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("command with the broker up: %d %+v", resp.StatusCode, body)
	}

	broker.Stop(os.Kill)
	for deadline := time.Now().Add(30 * time.Second); g.Connected(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the gate did not notice the broker's loss in 30 s")
		}
	}
	resp, body := send(gated)
	if resp.StatusCode != http.StatusServiceUnavailable || body.Code != 503 || !strings.Contains(body.Message, "unreachable") || len(body.Details) == 0 {
		t.Errorf("command while the broker is down: %d %+v, want 503 saying the broker is unreachable", resp.StatusCode, body)
	}
	if ra, want := resp.Header.Get("Retry-After"), fmt.Sprint(int(homemqtt.MaxReconnectInterval/time.Second)); ra != want {
		t.Errorf("command while the broker is down: Retry-After %q, want %q (the reconnection backoff's cap)", ra, want)
	}

	resp, body = send(gateless)
	if resp.StatusCode != http.StatusNotFound || body.Code != 404 || len(body.Details) != 1 || !strings.Contains(body.Details[0], "--smarthome-mqtt") {
		t.Errorf("command without a gate: %d %+v, want 404 naming --smarthome-mqtt", resp.StatusCode, body)
	}
	if ra := resp.Header.Get("Retry-After"); ra != "" {
		t.Errorf("command without a gate: Retry-After %q, want none (retrying cannot help)", ra)
	}

	broker.Start()
	for deadline := time.Now().Add(30 * time.Second); !g.Connected(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the gate did not reconnect in 30 s")
		}
	}
	if resp, body := send(gated); resp.StatusCode != http.StatusAccepted {
		t.Errorf("command once the broker is back: %d %+v", resp.StatusCode, body)
	}
}

// What an administrator sends to a login that has no agent credential,
// through HTTP against a private Mosquitto, is refused with 404 in the
// Common error naming the agent, and nothing reaches the broker: a command,
// each of the app's changes, an error report and a config request alike.
func TestAdminSendsToAnUnregisteredAgent(t *testing.T) {
	f := newGateServers(t)
	ghost := subscribeAgent(t, f.broker.URL(), homemqtt.DefaultRoot+"/ghost/down/#")
	for _, c := range []struct{ path, body string }{
		{"commands", `{"devices":{"lamp":{"states":[{"key":"on_off","value":{"type":"BOOL","bool_value":true}}]}}}`},
		{"rename_device_request", `{"device_id":"lamp","new_name":"L"}`},
		{"change_group_device_request", `{"device_id":"lamp","home":"H","room":"R"}`},
		{"errors", `{"topic":"up/config","errors":["x"]}`},
		{"config_request", `{}`},
	} {
		req, _ := http.NewRequest("POST", f.gated+"/v1/admin/agents/ghost/"+c.path, strings.NewReader(c.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("root:"+f.adminPW)))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body errorBody
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusNotFound || body.Code != 404 || body.Message != "Not found" ||
			len(body.Details) != 1 || body.Details[0] != "agent 'ghost' does not exist" {
			t.Errorf("POST %s for an unregistered agent: %d %+v, want 404 saying agent 'ghost' does not exist", c.path, resp.StatusCode, body)
		}
	}
	ghost.none(t)
}

// configureLamp has agent dev publish a config with the lamp, which a
// command must name, and waits for the gate's status_request that shows
// the gate has read it.
func configureLamp(t *testing.T, url string, g *homemqtt.Gate) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !g.Connected(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the gate did not connect in 30 s")
		}
	}
	got := make(chan []byte, 4)
	c := mqtt.NewClient(mqtt.NewClientOptions().AddBroker(url).SetClientID(fmt.Sprintf("agent-%d", time.Now().UnixNano())))
	if tok := c.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("agent connect: %v", tok.Error())
	}
	defer c.Disconnect(100)
	root := homemqtt.DefaultRoot + "/dev"
	if tok := c.Subscribe(root+"/down/status_request", 1, func(_ mqtt.Client, m mqtt.Message) { got <- m.Payload() }); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("subscribe: %v", tok.Error())
	}
	lamp := `{"devices":[{"id":"lamp","name":"Lamp","default_name":"Lamp","model":{"id":"m1","manufacturer":"M","model":"L","category":"light","features":["online","on_off"]}}]}`
	if tok := c.Publish(root+"/up/config", 1, false, lamp); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("publish: %v", tok.Error())
	}
	select {
	case <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("the gate did not read the config in 10 s")
	}
}
