package homemqtt_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"partnerapi/internal/smarthome"
	"partnerapi/internal/smarthome/homemqtt"
	"partnerapi/internal/testenv"
)

// Through a real broker, an agent that behaves as MQTT-SberGate does: it
// answers a rename with an up/config of the renamed device alone. The gate
// merges that config into the agent's devices instead of reading it as the
// whole list: no finding for the child's parent_id naming the hub of the
// earlier config, a status_request for the renamed device alone, and the
// other devices stay the agent's, so a command to one of them goes out.
func TestGateMergesAConfigOfOneDevice(t *testing.T) {
	url := testenv.MQTTBroker(t)
	c, err := smarthome.Seed()
	if err != nil {
		t.Fatal(err)
	}
	root := fmt.Sprintf("partnerapi-test-%d", time.Now().UnixNano())
	g, err := homemqtt.Start(homemqtt.Config{Broker: url, Root: root, Endpoint: "http://127.0.0.1:9445"}, seedCatalog{c})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	t.Cleanup(func() { newAgent(t, url).publish(root+"/__config", "", true) })
	waitFor(t, "the gate to subscribe", g.Connected)

	const (
		hub  = `{"id":"hub","name":"Hub","default_name":"Hub","model":{"id":"h1","manufacturer":"M","model":"H","category":"hub","features":["online"]}}`
		lamp = `{"id":"lamp","parent_id":"hub","name":"%s","default_name":"Lamp","model":{"id":"m1","manufacturer":"M","model":"L","category":"light","features":["online","on_off"]}}`
		plug = `{"id":"plug","parent_id":"hub","name":"Plug","default_name":"Plug","model":{"id":"m2","manufacturer":"M","model":"S","category":"socket","features":["online","on_off"]}}`
	)
	errs := newAgent(t, url, root+"/ctl/down/errors")
	asked := newAgent(t, url, root+"/ctl/down/status_request")
	told := newAgent(t, url, root+"/ctl/down/rename_device_request", root+"/ctl/down/commands")
	errs.publish(root+"/ctl/up/config", `{"devices":[`+hub+`,`+fmt.Sprintf(lamp, "Lamp")+`,`+plug+`]}`, false)
	if m := asked.next(); string(m.Payload()) != `{"devices":["hub","lamp","plug"]}` {
		t.Fatalf("status_request after the whole config: %s", m.Payload())
	}

	if _, err := g.Send(context.Background(), "ctl", smarthome.RenameKind, []byte(`{"device_id":"lamp","new_name":"Desk lamp"}`)); err != nil {
		t.Fatal(err)
	}
	if m := told.next(); string(m.Payload()) != `{"device_id":"lamp","new_name":"Desk lamp"}` {
		t.Fatalf("rename sent: %s", m.Payload())
	}
	// The agent's answer: its config of the renamed lamp alone.
	errs.publish(root+"/ctl/up/config", `{"devices":[`+fmt.Sprintf(lamp, "Desk lamp")+`]}`, false)
	if m := asked.next(); string(m.Payload()) != `{"devices":["lamp"]}` {
		t.Fatalf("status_request after the one-device config: %s", m.Payload())
	}
	select {
	case m := <-errs.got:
		t.Fatalf("findings on the one-device config: %s", m.Payload())
	case <-time.After(300 * time.Millisecond):
	}
	cmd := `{"devices":{"plug":{"states":[{"key":"on_off","value":{"type":"BOOL","bool_value":true}}]}}}`
	if _, err := g.Command(context.Background(), "ctl", []byte(cmd)); err != nil {
		t.Fatalf("command to the plug after the one-device config: %v", err)
	}
	if m := told.next(); string(m.Payload()) != cmd {
		t.Fatalf("command sent: %s", m.Payload())
	}
}
