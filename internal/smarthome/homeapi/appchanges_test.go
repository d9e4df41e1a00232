package homeapi

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"partnerapi/internal/smarthome"
	"partnerapi/internal/smarthome/homemqtt"
)

// The app's changes to a device, the cloud's error reports and its
// config request, through
// HTTP against a private Mosquitto, as an agent under test receives them:
// an MQTT client subscribed to every down/ topic of agent dev gets each
// sound request on exactly its topic with exactly the bytes of its golden
// file (testdata/appchanges), rebuilt in the reference's field order
// whatever order and spacing the administrator used, and nothing for a
// request refused: a device the agent's last up/config did not announce
// (404 in the Common error, naming the device), a blank, over-long or
// multi-line name, an unknown field (400), an agent's credentials (401).
// Without the gate a sound request is 404 naming the flag, with its broker
// away 503 with Retry-After, as commands are.
func TestAppChangesReachTheAgent(t *testing.T) {
	f := newGateServers(t)
	broker, g, adminPW, agentPW, gated, gateless := f.broker, f.gate, f.adminPW, f.agentPW, f.gated, f.gateless
	down := homemqtt.DefaultRoot + "/dev/down/"
	agent := subscribeAgent(t, broker.URL(), down+"#")

	type answer struct {
		status int
		header http.Header
		body   []byte
	}
	post := func(base, path, login, password, body string) answer {
		t.Helper()
		req, _ := http.NewRequest("POST", base+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if login != "" {
			req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(login+":"+password)))
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return answer{resp.StatusCode, resp.Header, b}
	}
	asAdmin := func(base, path, body string) answer { t.Helper(); return post(base, path, "root", adminPW, body) }
	const (
		rename = "/v1/admin/agents/dev/rename_device_request"
		group  = "/v1/admin/agents/dev/change_group_device_request"
		report = "/v1/admin/agents/dev/errors"
		ask    = "/v1/admin/agents/dev/config_request"
	)

	for _, c := range []struct{ path, body, kind string }{
		{rename, `{ "new_name": "Лампа у дивана & <Tom>", "device_id": "lamp" }`, smarthome.RenameKind},
		{group, "{\"room\":\"Спальня\",\n \"home\":\"Обогатительная\", \"device_id\":\"lamp\"}", smarthome.GroupKind},
		{report, `{"errors":["model 'acme-s9' is not in the catalog"],"topic":"up/config"}`, smarthome.ErrorsKind},
		{ask, " { } ", smarthome.ConfigRequestKind},
	} {
		a := asAdmin(gated, c.path, c.body)
		var got struct{ Topic string }
		if err := json.Unmarshal(a.body, &got); a.status != http.StatusAccepted || err != nil || got.Topic != down+c.kind {
			t.Fatalf("POST %s: %d %s, want 202 naming %s", c.path, a.status, a.body, down+c.kind)
		}
		golden, err := os.ReadFile(filepath.Join("testdata", "appchanges", c.kind+".json"))
		if err != nil {
			t.Fatal(err)
		}
		m := agent.next(t)
		if m.Topic() != down+c.kind || string(m.Payload()) != string(golden) {
			t.Fatalf("the agent got %s %s\nwant %s %s", m.Topic(), m.Payload(), down+c.kind, golden)
		}
	}

	for _, c := range []struct {
		name, base, path, login, password, body string
		status                                  int
		says                                    string
	}{
		{"rename of a device never configured", gated, rename, "root", adminPW, `{"device_id":"ghost","new_name":"G"}`, 404, "device 'ghost' is not a device of the agent's config (agent 'dev')"},
		{"move of a device never configured", gated, group, "root", adminPW, `{"device_id":"ghost","home":"H","room":"R"}`, 404, "device 'ghost'"},
		{"rename for an agent without a config", gated, "/v1/admin/agents/other/rename_device_request", "root", adminPW, `{"device_id":"lamp","new_name":"L"}`, 404, "device 'lamp' is not a device of the agent's config (agent 'other')"},
		{"blank name", gated, rename, "root", adminPW, `{"device_id":"lamp","new_name":"  "}`, 400, "new_name is required and cannot be blank"},
		{"name over 128 characters", gated, rename, "root", adminPW, `{"device_id":"lamp","new_name":"` + strings.Repeat("я", 129) + `"}`, 400, "new_name is 129 characters, more than 128"},
		{"name with a line break", gated, rename, "root", adminPW, `{"device_id":"lamp","new_name":"a\nb"}`, 400, "new_name cannot hold control characters"},
		{"name as the config spells it", gated, rename, "root", adminPW, `{"device_id":"lamp","name":"L"}`, 400, `unknown field "name"`},
		{"move without a home", gated, group, "root", adminPW, `{"device_id":"lamp","room":"R"}`, 400, "home is required"},
		{"rename without a device", gated, rename, "root", adminPW, `{"new_name":"L"}`, 400, "device_id is required"},
		{"report about another topic", gated, report, "root", adminPW, `{"topic":"down/commands","errors":["x"]}`, 400, "topic must be"},
		{"report without errors", gated, report, "root", adminPW, `{"topic":"up/status","errors":[]}`, 400, "errors must list at least one error"},
		{"rename as the agent", gated, rename, "dev", agentPW, `{"device_id":"lamp","new_name":"L"}`, 401, ""},
		{"move without credentials", gated, group, "", "", `{"device_id":"lamp","home":"H","room":"R"}`, 401, ""},
		{"report as the agent", gated, report, "dev", agentPW, `{"topic":"up/config","errors":["x"]}`, 401, ""},
		{"rename without the gate", gateless, rename, "root", adminPW, `{"device_id":"lamp","new_name":"L"}`, 404, "--smarthome-mqtt"},
		{"move without the gate", gateless, group, "root", adminPW, `{"device_id":"lamp","home":"H","room":"R"}`, 404, "--smarthome-mqtt"},
		{"report without the gate", gateless, report, "root", adminPW, `{"topic":"up/config","errors":["x"]}`, 404, "--smarthome-mqtt"},
		{"bad rename without the gate", gateless, rename, "root", adminPW, `{"device_id":"lamp"}`, 400, "new_name is required"},
		{"config request with a field", gated, ask, "root", adminPW, `{"devices":[]}`, 400, `unknown field "devices"`},
		{"config request without a body", gated, ask, "root", adminPW, ``, 400, "body must be {}"},
		{"config request as the agent", gated, ask, "dev", agentPW, `{}`, 401, ""},
		{"config request without the gate", gateless, ask, "root", adminPW, `{}`, 404, "--smarthome-mqtt"},
	} {
		a := post(c.base, c.path, c.login, c.password, c.body)
		var e errorBody
		if err := json.Unmarshal(a.body, &e); err != nil || a.status != c.status || e.Code != c.status || !strings.Contains(strings.Join(e.Details, "\n"), c.says) {
			t.Errorf("%s: %d %s, want %d in the Common error saying %q", c.name, a.status, a.body, c.status, c.says)
		}
		if ra := a.header.Get("Retry-After"); ra != "" {
			t.Errorf("%s: Retry-After %q, want none (sending it again cannot help)", c.name, ra)
		}
	}
	agent.none(t)

	broker.Stop(os.Kill)
	for deadline := time.Now().Add(30 * time.Second); g.Connected(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the gate did not notice the broker's loss in 30 s")
		}
	}
	for _, c := range []struct{ path, body string }{
		{rename, `{"device_id":"lamp","new_name":"L"}`},
		{group, `{"device_id":"lamp","home":"H","room":"R"}`},
		{report, `{"topic":"up/config","errors":["x"]}`},
		{ask, `{}`},
	} {
		a := asAdmin(gated, c.path, c.body)
		var e errorBody
		_ = json.Unmarshal(a.body, &e)
		if a.status != http.StatusServiceUnavailable || e.Code != 503 || e.Message != "MQTT broker unreachable" {
			t.Errorf("POST %s while the broker is down: %d %s, want 503 saying the broker is unreachable", c.path, a.status, a.body)
		}
		if ra, want := a.header.Get("Retry-After"), fmt.Sprint(int(homemqtt.MaxReconnectInterval/time.Second)); ra != want {
			t.Errorf("POST %s while the broker is down: Retry-After %q, want %q", c.path, ra, want)
		}
	}
}

// testAgent is an MQTT client subscribed as an agent under test.
type testAgent struct{ got chan mqtt.Message }

func subscribeAgent(t *testing.T, url, topic string) *testAgent {
	t.Helper()
	a := &testAgent{got: make(chan mqtt.Message, 16)}
	c := mqtt.NewClient(mqtt.NewClientOptions().AddBroker(url).SetClientID(fmt.Sprintf("agent-sub-%d", time.Now().UnixNano())))
	if tok := c.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("agent connect: %v", tok.Error())
	}
	t.Cleanup(func() { c.Disconnect(100) })
	if tok := c.Subscribe(topic, 1, func(_ mqtt.Client, m mqtt.Message) { a.got <- m }); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("subscribe: %v", tok.Error())
	}
	return a
}

func (a *testAgent) next(t *testing.T) mqtt.Message {
	t.Helper()
	select {
	case m := <-a.got:
		return m
	case <-time.After(10 * time.Second):
		t.Fatal("the agent got nothing in 10 s")
		return nil
	}
}

// none checks that nothing more reaches the agent: a QoS 1 message the
// broker took is delivered well within the wait.
func (a *testAgent) none(t *testing.T) {
	t.Helper()
	select {
	case m := <-a.got:
		t.Errorf("the agent got %s %s, want nothing", m.Topic(), m.Payload())
	case <-time.After(500 * time.Millisecond):
	}
}
