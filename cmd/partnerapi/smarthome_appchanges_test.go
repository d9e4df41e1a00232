package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/smarthome/homemqtt"
	"partnerapi/internal/testenv"
)

// `partnerapi smarthome device rename|move` and `agent errors|config-request`
// through serve and a private Mosquitto: an MQTT client subscribed as agent
// ctl receives each on exactly its topic with exactly the bytes of its
// golden file (testdata/smarthome/appchanges), the administrator's password
// taken from PARTNERAPI_ADMIN_PASSWORD; the agent's answer to the config
// request, without l2, makes the server forget l2; a device the agent did not announce is an error
// quoting the server's 404 and sends nothing, as does a command without
// credentials.
func TestSmarthomeAppChangesCLI(t *testing.T) {
	broker := testenv.StartMosquitto(t)
	ts := startServer(t, "--only", "smarthome", "--smarthome-mqtt", broker.URL())
	admin := provision(t, ts.dataDir, "admin", "root-cli")
	provision(t, ts.dataDir, "agent", "ctl") // the gate serves registered agents only
	const l1 = `{"id":"l1","name":"L1","default_name":"L1","model":{"id":"L","manufacturer":"U","model":"U","category":"light","features":["online","on_off"]}}`
	const l2 = `{"id":"l2","name":"L2","default_name":"L2","model":{"id":"L","manufacturer":"U","model":"U","category":"light","features":["online","on_off"]}}`
	const l3 = `{"id":"l3","name":"L3","default_name":"L3","model":{"id":"L","manufacturer":"U","model":"U","category":"light","features":["online","on_off"]}}`
	configureAgent(t, broker.URL(), homemqtt.DefaultRoot, "ctl", `{"devices":[`+l1+`,`+l2+`,`+l3+`]}`)
	down := homemqtt.DefaultRoot + "/ctl/down/"
	c, got := subscribedAgent(t, broker.URL(), "ctl-cli-test", down+"#")
	env := map[string]string{"PARTNERAPI_ADMIN_PASSWORD": admin.pass, "PARTNERAPI_SMARTHOME_URL": ts.urls["smarthome"]}
	run := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := runSmarthome(context.Background(), append(args, "--admin", admin.user), func(k string) string { return env[k] },
			stdio{in: strings.NewReader(""), out: &out, err: io.Discard})
		return out.String(), err
	}

	for _, c := range []struct {
		kind string
		args []string
	}{
		{"rename_device_request", []string{"device", "rename", "--agent", "ctl", "--device", "l1", "--name", `Торшер "Ночник" & <лампа>`}},
		{"change_group_device_request", []string{"device", "move", "--agent", "ctl", "--device", "l1", "--home", "Дача", "--room", "Веранда"}},
		{"errors", []string{"agent", "errors", "--login", "ctl", "--topic", "up/status", "--error", "device 'l1' reported no online", "--error", "retry the status"}},
		{"config_request", []string{"agent", "config-request", "--login", "ctl"}},
	} {
		out, err := run(c.args...)
		var answer struct{ Topic string }
		if err != nil || json.Unmarshal([]byte(out), &answer) != nil || answer.Topic != down+c.kind {
			t.Fatalf("%v: %q, %v; want the topic %s", c.args, out, err, down+c.kind)
		}
		golden, err := os.ReadFile(filepath.Join("testdata", "smarthome", "appchanges", c.kind+".json"))
		if err != nil {
			t.Fatal(err)
		}
		select {
		case m := <-got:
			if m.Topic() != down+c.kind || string(m.Payload()) != string(golden) {
				t.Fatalf("the agent got %s %s\nwant %s %s", m.Topic(), m.Payload(), down+c.kind, golden)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%v: nothing reached the agent in 10 s", c.args)
		}
	}

	// The agent answers the config request without l2, taken off the
	// controller: the gate forgets it, so renaming it is the server's 404.
	// (A list of l1 alone would be read as the answer to the rename and
	// the move of l1 sent before, which agents answer with a config of
	// that device: smarthome.Agent Config.)
	if tok := c.Publish(homemqtt.DefaultRoot+"/ctl/up/config", 1, false, `{"devices":[`+l1+`,`+l3+`]}`); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatal(tok.Error())
	}
	select {
	case m := <-got:
		if m.Topic() != down+"status_request" || string(m.Payload()) != `{"devices":["l1","l3"]}` {
			t.Fatalf("after the answer to the config request the agent got %s %s, want a status_request for l1 and l3", m.Topic(), m.Payload())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no status_request after the answer to the config request")
	}
	if _, err := run("device", "rename", "--agent", "ctl", "--device", "l2", "--name", "L"); err == nil ||
		!strings.Contains(err.Error(), "404") || !strings.Contains(err.Error(), "device 'l2' is not a device of the agent's config") {
		t.Errorf("rename of the device the answer left out: %v, want the server's 404", err)
	}
	if _, err := run("device", "rename", "--agent", "ctl", "--device", "ghost", "--name", "G"); err == nil ||
		!strings.Contains(err.Error(), "404") || !strings.Contains(err.Error(), "device 'ghost' is not a device of the agent's config") {
		t.Errorf("rename of a device never announced: %v, want the server's 404", err)
	}
	if _, err := run("device", "move", "--agent", "ctl", "--device", "l1", "--home", "H"); err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), "room is required") {
		t.Errorf("move without a room: %v, want the server's 400", err)
	}
	delete(env, "PARTNERAPI_ADMIN_PASSWORD")
	if _, err := run("device", "rename", "--agent", "ctl", "--device", "l1", "--name", "N"); err == nil || !strings.Contains(err.Error(), "PARTNERAPI_ADMIN_PASSWORD") {
		t.Errorf("rename without a password: %v", err)
	}
	select {
	case m := <-got:
		t.Errorf("a refused request reached the agent: %s %s", m.Topic(), m.Payload())
	case <-time.After(500 * time.Millisecond):
	}
}
