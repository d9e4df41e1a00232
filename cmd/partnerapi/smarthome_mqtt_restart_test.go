package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"partnerapi/internal/smarthome"
	"partnerapi/internal/testenv"
)

// pollFor checks cond every 50 ms for up to 30 s: recovery is checked, not
// its latency.
func pollFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 30 s", what)
		}
	}
}

// mqttAgent is a paho client playing an agent: it subscribes to its
// down/ topics (status_request, commands) and hands over what arrives.
func mqttAgent(t *testing.T, broker, topicPrefix string) (mqtt.Client, chan mqtt.Message) {
	t.Helper()
	return subscribedAgent(t, broker, "agent-"+time.Now().Format("150405.000000000"), topicPrefix+"/down/status_request", topicPrefix+"/down/commands")
}

// --smarthome-mqtt through serve, with a private Mosquitto (never the
// machine's shared one) that crashes (SIGKILL) and comes back without
// persistence: while it is down /metrics says so
// (partnerapi_smarthome_mqtt_connected 0), /healthz stays 200 (the HTTP
// API still serves agents) and an administrator's command is refused with
// 503 instead of being queued; once it is back the gate has reconnected
// and resubscribed by itself, an agent's config is answered with a
// status_request and a command reaches the agent. The loss and the
// recovery are logged once each. Then the broker stops (SIGTERM) for
// good and serve, told to shut down, returns within its
// --shutdown-timeout although the gate cannot say goodbye to a broker.
func TestSmarthomeMQTTGateSurvivesBrokerRestart(t *testing.T) {
	broker := testenv.StartMosquitto(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	logs := &testenv.LogBuffer{}
	readyc := make(chan map[string]string, 1)
	errc := make(chan error, 1)
	args := []string{"--only", "smarthome", "--data-dir", dir, "--models-dir", filepath.Join(dir, "models"),
		"--smarthome-addr", "127.0.0.1:0", "--smarthome-mqtt", broker.URL(), "--shutdown-timeout", "2s", "--log-flush-interval", "0"}
	go func() {
		errc <- serve(ctx, args, func(string) string { return "" }, stdio{in: strings.NewReader(""), out: io.Discard, err: logs},
			func(a map[string]string) { readyc <- a })
	}()
	var base string
	select {
	case addrs := <-readyc:
		base = "http://" + addrs["smarthome"]
	case err := <-errc:
		t.Fatalf("serve failed: %v\n%s", err, logs.String())
	case <-ctx.Done():
		t.Fatal("serve did not start")
	}
	stopped := false
	defer func() {
		if !stopped {
			cancel()
			<-errc
		}
	}()
	agent := provision(t, dir, "agent", "agent-r")
	admin := provision(t, dir, "admin", "root")
	agent.base, admin.base = base, base
	// The gate read the registered agents when it started; a credential
	// another process creates is seen within twice the recheck.
	time.Sleep(3 * smarthome.DefaultRecheck)
	connected := func(want string) func() bool {
		return func() bool {
			_, body := get(t, base+"/metrics")
			return regexp.MustCompile(`(?m)^partnerapi_smarthome_mqtt_connected ` + want + `$`).Match(body)
		}
	}
	prefix := "sberdevices/v1/agent-r"
	lamp := `{"devices":[{"id":"lamp","name":"Lamp","default_name":"Lamp","model":{"id":"m1","manufacturer":"M","model":"L","category":"light","features":["online","on_off"]}}]}`
	command := []byte(`{"devices":{"lamp":{"states":[{"key":"on_off","value":{"type":"BOOL","bool_value":true}}]}}}`)
	// configured has a fresh agent publish its config and waits for the
	// gate's status_request: the gate hears the agent and answers it.
	configured := func() chan mqtt.Message {
		t.Helper()
		c, got := mqttAgent(t, broker.URL(), prefix)
		if tok := c.Publish(prefix+"/up/config", 1, false, lamp); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			t.Fatal(tok.Error())
		}
		select {
		case m := <-got:
			if m.Topic() != prefix+"/down/status_request" {
				t.Fatalf("after the config: %s %q", m.Topic(), m.Payload())
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no status_request in 10 s\n%s", logs.String())
		}
		return got
	}
	pollFor(t, "connected at start", connected("1"))
	configured()

	broker.Stop(os.Kill)
	pollFor(t, "/metrics shows the gate disconnected", connected("0"))
	if resp, body := get(t, base+"/healthz"); resp.StatusCode != 200 {
		t.Errorf("/healthz %d %s while the broker is down: the HTTP API still serves", resp.StatusCode, body)
	}
	resp, body := admin.do("POST", "/v1/admin/agents/agent-r/commands", command)
	if resp.StatusCode != 503 || !strings.Contains(string(body), "lost its broker") {
		t.Fatalf("command while the broker is down: %d %s, want 503", resp.StatusCode, body)
	}

	broker.Start()
	pollFor(t, "/metrics shows the gate reconnected", connected("1"))
	got := configured()
	resp, body = admin.do("POST", "/v1/admin/agents/agent-r/commands", command)
	if resp.StatusCode != 202 {
		t.Fatalf("command after the restart: %d %s", resp.StatusCode, body)
	}
	select {
	case m := <-got:
		if m.Topic() != prefix+"/down/commands" || !strings.Contains(string(m.Payload()), `"bool_value":true`) {
			t.Fatalf("after the command: %s %q", m.Topic(), m.Payload())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the command did not reach the agent in 10 s")
	}
	if _, body := get(t, base+"/metrics"); !strings.Contains(string(body), "partnerapi_smarthome_mqtt_reconnects_total 1") ||
		!strings.Contains(string(body), `partnerapi_smarthome_mqtt_dropped_total{reason="unreachable",topic="commands"} 1`) {
		t.Errorf("/metrics after one restart and one refused command:\n%s", grepLines(string(body), "partnerapi_smarthome_mqtt"))
	}
	out := logs.String()
	if n := strings.Count(out, "connection to the broker lost"); n != 1 {
		t.Errorf("the loss logged %d times, want once:\n%s", n, out)
	}
	if n := strings.Count(out, "gate reconnected"); n != 1 {
		t.Errorf("the recovery logged %d times, want once:\n%s", n, out)
	}
	if strings.Contains(out, "level=ERROR") {
		t.Errorf("ERROR lines across a broker restart:\n%s", out)
	}

	// Shutdown with the broker gone for good must not wait for it.
	broker.Stop(syscall.SIGTERM)
	pollFor(t, "/metrics shows the gate disconnected again", connected("0"))
	cancel()
	stopped = true
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(2*time.Second + 10*time.Second):
		t.Fatalf("serve did not stop within its --shutdown-timeout (2s) and a margin with the broker down\n%s", logs.String())
	}
}

// grepLines is the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
