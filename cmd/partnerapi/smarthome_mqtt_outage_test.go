package main

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/storetest"
	"partnerapi/internal/testenv"
)

// Through serve on PostgreSQL and a real broker: an agent's up/config that
// arrives while the database is down is held by the gate, shown on
// /metrics (partnerapi_smarthome_mqtt_held 1), and read once the database
// is back, when the agent gets the status_request that follows a config;
// nothing was lost on the way.
func TestSmarthomeGateHoldsAgentMessagesAcrossADatabaseOutage(t *testing.T) {
	broker := testenv.MQTTBroker(t)
	dbURL, proxy, ok := outageDatabase(t, "homehold")
	if !ok {
		t.Skip("needs PostgreSQL: set " + storetest.EnvPostgres)
	}
	root := fmt.Sprintf("partnerapi-serve-test-%d", time.Now().UnixNano())
	clearRetainedAfter(t, broker, root)
	ts := startServer(t, "--only", "smarthome", "--database-url", dbURL, "--smarthome-mqtt", broker, "--smarthome-mqtt-root", root)
	// The gate serves registered agents only.
	var out strings.Builder
	if err := runSmarthome(context.Background(), []string{"agent", "create", "--login", "ctl-h", "--database-url", dbURL},
		func(string) string { return "" }, stdio{in: strings.NewReader(""), out: &out, err: io.Discard}); err != nil {
		t.Fatal(err)
	}
	// The gate is serving once it answers a config.
	configureAgent(t, broker, root, "ctl-h", `{"devices":[{"id":"h0","name":"H0","default_name":"H0","model":{"id":"H","manufacturer":"U","model":"U","category":"hub","features":["online"]}}]}`)

	c, got := subscribedAgent(t, broker, root+"-held", root+"/ctl-h/down/status_request")
	proxy.down()
	// The catalog read for the config above is served for 50 ms more
	// (smarthome.DefaultRecheck) without asking the database.
	time.Sleep(300 * time.Millisecond)
	config := `{"devices":[{"id":"l1","name":"L1","default_name":"L1","model":{"id":"L","manufacturer":"U","model":"U","category":"light","features":["online","on_off"]}}]}`
	if tok := c.Publish(root+"/ctl-h/up/config", 1, false, config); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("publish: %v", tok.Error())
	}
	held := regexp.MustCompile(`(?m)^partnerapi_smarthome_mqtt_held 1$`)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, body := get(t, ts.urls["smarthome"]+"/metrics"); held.Match(body) {
			break
		}
		if time.Now().After(deadline) {
			_, body := get(t, ts.urls["smarthome"]+"/metrics")
			t.Fatalf("the config is not held 30 s into the outage:\n%s\n%s", grepLines(string(body), "partnerapi_smarthome_mqtt"), grepLines(ts.logs.String(), "smarthome"))
		}
		time.Sleep(100 * time.Millisecond)
	}
	select {
	case m := <-got:
		t.Fatalf("status_request while the database is down: %s", m.Payload())
	case <-time.After(300 * time.Millisecond):
	}
	proxy.up()
	select {
	case m := <-got:
		if string(m.Payload()) != `{"devices":["l1"]}` {
			t.Fatalf("status_request after the outage: %s", m.Payload())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the held config was not read 30 s after the database came back")
	}
	// The gauge goes down once the held message's handling ends, which is
	// after the status_request it sends: wait for it rather than race it.
	released := regexp.MustCompile(`(?m)^partnerapi_smarthome_mqtt_held 0$`)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		_, body := get(t, ts.urls["smarthome"]+"/metrics")
		if released.Match(body) && regexp.MustCompile(`(?m)^partnerapi_smarthome_mqtt_held_dropped_total 0$`).Match(body) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/metrics 10 s after the outage:\n%s", grepLines(string(body), "partnerapi_smarthome_mqtt"))
		}
	}
}
