package smarthome

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// An agent's status is checked against the categories of its config: a
// lamp's brightness passes and a socket's is unknown; a device a later
// config leaves out keeps its model (configs are merged); malformed
// messages are InvalidError.
func TestAgentConfigThenStatus(t *testing.T) {
	c := seed(t)
	var a Agent
	config := `{"devices":[
		{"id":"lamp","name":"Lamp","default_name":"Lamp","model":{"id":"m1","manufacturer":"M","model":"L","category":"light","features":["online","on_off","light_brightness"]}},
		{"id":"plug","name":"Plug","default_name":"Plug","model":{"id":"m2","manufacturer":"M","model":"S","category":"socket","features":["online","on_off"]}}]}`
	rep, err := a.Config(c, []byte(config))
	if err != nil || !rep.Valid || len(rep.Devices) != 2 {
		t.Fatalf("config: %+v, %v", rep, err)
	}
	status := `{"devices":{
		"lamp":{"states":[{"key":"light_brightness","value":{"type":"INTEGER","integer_value":"500"}}]},
		"plug":{"states":[{"key":"light_brightness","value":{"type":"INTEGER","integer_value":"500"}}]}}}`
	judged := func(when string) {
		t.Helper()
		rep, err := a.Status(c, []byte(status))
		if err != nil || rep.Valid || len(rep.Devices) != 2 {
			t.Fatalf("status %s: %+v, %v", when, rep, err)
		}
		if lamp, plug := rep.Devices[0], rep.Devices[1]; !lamp.OK() || lamp.Category != "light" ||
			len(plug.UnknownFeatures) != 1 || plug.UnknownFeatures[0] != "light_brightness" || plug.Category != "socket" {
			t.Fatalf("%s: lamp %+v, plug %+v", when, lamp, plug)
		}
	}
	judged("after the config")
	// A config of the lamp alone, as an agent sends after a rename: the
	// plug keeps its model.
	if _, err := a.Config(c, []byte(`{"devices":[{"id":"lamp","name":"Desk lamp","default_name":"Lamp","model":{"id":"m1","manufacturer":"M","model":"L","category":"light","features":["online","on_off","light_brightness"]}}]}`)); err != nil {
		t.Fatal(err)
	}
	judged("after a config of the lamp alone")
	if got := a.Devices(); !reflect.DeepEqual(got, []string{"lamp", "plug"}) {
		t.Errorf("devices after a config of the lamp alone: %v", got)
	}
	var inv *InvalidError
	for _, bad := range []string{`not json`, `{"devices":{"lamp":{}}}`, `{}`} {
		if _, err := a.Config(c, []byte(bad)); !errors.As(err, &inv) {
			t.Errorf("config %q: %v, want InvalidError", bad, err)
		}
	}
	for _, bad := range []string{`not json`, `{"devices":[]}`, `{}`} {
		if _, err := a.Status(c, []byte(bad)); !errors.As(err, &inv) {
			t.Errorf("status %q: %v, want InvalidError", bad, err)
		}
	}
}

// TestAgentCommand runs the cases in testdata/command/*.json: each file
// holds the agent's config (none: the agent sent none), the command an
// administrator posts, and either the message sent on down/commands or the
// details of the refusal.
func TestAgentCommand(t *testing.T) {
	c := seed(t)
	eachGolden(t, "testdata/command/*.json", 4, func(t *testing.T, tc struct {
		Config  json.RawMessage `json:"config"`
		Command json.RawMessage `json:"command"`
		Sent    json.RawMessage `json:"sent"`
		Details []string        `json:"details"`
	}) {
		var a Agent
		if tc.Config != nil {
			if _, err := a.Config(c, tc.Config); err != nil {
				t.Fatal(err)
			}
		}
		sent, err := a.Command(c, tc.Command)
		if tc.Details != nil {
			var inv *InvalidError
			if !errors.As(err, &inv) || !reflect.DeepEqual(inv.Details, tc.Details) {
				t.Fatalf("refusal %v (sent %s)\nwant %q", err, sent, tc.Details)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		sameJSON(t, "sent", sent, tc.Sent)
	})
}

// TestAgentStatus runs the cases in testdata/status/*.json: each file holds
// the agent's config, its status and the expected report, in which each
// device is judged by the model the config gave it.
func TestAgentStatus(t *testing.T) {
	c := seed(t)
	eachGolden(t, "testdata/status/*.json", 3, func(t *testing.T, tc struct {
		Config, Status, Want json.RawMessage
	}) {
		var a Agent
		if _, err := a.Config(c, tc.Config); err != nil {
			t.Fatal(err)
		}
		rep, err := a.Status(c, tc.Status)
		if err != nil {
			t.Fatal(err)
		}
		gb, _ := json.Marshal(rep)
		sameJSON(t, "report", gb, tc.Want)
	})
}

// AskConfig says yes once for an agent that has sent no config, again
// only after a config arrived and was forgotten (never: a config stays), and
// never for a configured agent.
func TestAgentAskConfig(t *testing.T) {
	c := seed(t)
	var a Agent
	if !a.AskConfig() || a.AskConfig() {
		t.Fatal("an unconfigured agent is asked exactly once")
	}
	if _, err := a.Config(c, []byte(`{"devices":[]}`)); err != nil {
		t.Fatal(err)
	}
	if a.AskConfig() {
		t.Fatal("a configured agent was asked")
	}
	var b Agent
	if _, err := b.Config(c, []byte(`not json`)); err == nil || !b.AskConfig() {
		t.Fatal("a config that does not parse does not configure")
	}
}

// FuzzAgent holds the agent's invariants on any messages: no panic, an
// answer is a report or an InvalidError, and a report is valid exactly when
// each of its devices is.
func FuzzAgent(f *testing.F) {
	f.Add([]byte(`{"devices":[{"id":"a","model":{"id":"m","manufacturer":"M","model":"X","category":"light","features":["online","on_off"]}}]}`),
		[]byte(`{"devices":{"a":{"states":[{"key":"on_off","value":{"type":"BOOL","bool_value":true}}]}}}`))
	f.Add([]byte(`{"devices":[]}`), []byte(`{"devices":{"x":{}}}`))
	f.Add([]byte(`{"devices":[{"id":"a","name":"A","default_name":"A","model":{"id":"m","manufacturer":"M","model":"X","category":"light","features":["online","on_off","light_brightness"]}}]}`),
		[]byte(`{"x":1,"devices":{"a":{"states":[{"key":"light_brightness","value":{"type":"INTEGER","integer_value":500,"bool_value":true}}]}}}`))
	c := seed(f)
	f.Fuzz(func(t *testing.T, config, status []byte) {
		var a Agent
		for i, msg := range [][]byte{config, status} {
			check := a.Config
			if i == 1 {
				check = a.Status
			}
			rep, err := check(c, msg)
			var inv *InvalidError
			if err != nil {
				if !errors.As(err, &inv) {
					t.Fatalf("error %v is not an InvalidError", err)
				}
				continue
			}
			valid := true
			for _, d := range rep.Devices {
				valid = valid && d.OK()
			}
			if rep.Valid != valid {
				t.Fatalf("report valid %v, devices %+v", rep.Valid, rep.Devices)
			}
		}
		// The status message sent as a command is refused with an
		// InvalidError or rebuilt into a message that is itself a command
		// the agent takes, unchanged.
		out, err := a.Command(c, status)
		var inv *InvalidError
		if err != nil {
			if !errors.As(err, &inv) {
				t.Fatalf("command error %v is not an InvalidError", err)
			}
			return
		}
		again, err := a.Command(c, out)
		if err != nil || string(again) != string(out) {
			t.Fatalf("rebuilt command %s is not stable: %s, %v", out, again, err)
		}
	})
}

// An up/config of one device, as the community agent sends after a
// rename or a move (MQTT-SberGate answers down/rename_device_request with
// up/config of that device alone), updates that device and keeps the
// others: the renamed device's new model applies to its statuses, a
// command to another device still goes out, and a hub's child sent alone
// may name the hub of an earlier config as its parent_id, which the
// stateless validation of one message only warns about.
func TestAgentConfigOfOneDeviceIsMerged(t *testing.T) {
	c := seed(t)
	var a Agent
	const (
		hub   = `{"id":"hub","name":"Hub","default_name":"Hub","model":{"id":"h1","manufacturer":"M","model":"H","category":"hub","features":["online"]}}`
		lamp  = `{"id":"lamp","parent_id":"hub","name":"Lamp","default_name":"Lamp","model":{"id":"m1","manufacturer":"M","model":"L","category":"light","features":["online","on_off"]}}`
		plug  = `{"id":"plug","parent_id":"hub","name":"Plug","default_name":"Plug","model":{"id":"m2","manufacturer":"M","model":"S","category":"socket","features":["online","on_off"]}}`
		lamp2 = `{"id":"lamp","parent_id":"hub","name":"Desk lamp","default_name":"Lamp","model":{"id":"m3","manufacturer":"M","model":"L2","category":"light","features":["online","on_off","light_brightness"]}}`
	)
	if rep, err := a.Config(c, []byte(`{"devices":[`+hub+`,`+lamp+`,`+plug+`]}`)); err != nil || !rep.Valid {
		t.Fatalf("whole config: %+v, %v", rep, err)
	}
	renamed := `{"devices":[` + lamp2 + `]}`
	if rep, err := a.Config(c, []byte(renamed)); err != nil || !rep.Valid {
		t.Fatalf("config of the renamed lamp alone: %+v, %v", rep, err)
	}
	if got := a.Devices(); !reflect.DeepEqual(got, []string{"hub", "lamp", "plug"}) {
		t.Errorf("devices after the one-device config: %v, want all three", got)
	}
	rep, err := a.Status(c, []byte(`{"devices":{"lamp":{"states":[{"key":"light_brightness","value":{"type":"INTEGER","integer_value":"500"}}]}}}`))
	if err != nil || !rep.Valid {
		t.Errorf("the lamp's brightness under its new model: %+v, %v", rep, err)
	}
	if _, err := a.Command(c, []byte(`{"devices":{"plug":{"states":[{"key":"on_off","value":{"type":"BOOL","bool_value":true}}]}}}`)); err != nil {
		t.Errorf("command to the plug the one-device config left out: %v", err)
	}
	if _, err := a.Rename([]byte(`{"device_id":"plug","new_name":"P"}`)); err != nil {
		t.Errorf("rename of the plug: %v", err)
	}
	// The stateless check of the message alone knows no earlier config:
	// the parent it cannot find is a warning, the message valid.
	if rep, err := c.Validate([]byte(renamed), ""); err != nil || !rep.Valid || len(rep.Devices[0].Errors) != 0 ||
		len(rep.Devices[0].Warnings) != 1 || rep.Devices[0].Warnings[0].Reason != ReasonParentNotInConfig {
		t.Errorf("validation of the one-device config alone: %+v, %v", rep, err)
	}
	// A parent the agent never announced is still a finding.
	rep, err = a.Config(c, []byte(`{"devices":[{"id":"x","parent_id":"nohub","name":"X","default_name":"X","model":{"id":"m2","manufacturer":"M","model":"S","category":"socket","features":["online","on_off"]}}]}`))
	if err != nil || rep.Valid || !reflect.DeepEqual(rep.Devices[0].Errors, []string{"parent_id 'nohub' is not another device of the agent's config"}) {
		t.Errorf("a parent never announced: %+v, %v", rep, err)
	}
	// A device announced again without a model the catalog has loses the
	// model it had: its statuses are judged by the whole catalog again.
	if _, err := a.Config(c, []byte(`{"devices":[{"id":"plug","name":"Plug","default_name":"Plug","model_id":"nope"}]}`)); err != nil {
		t.Fatal(err)
	}
	if got := a.Devices(); !reflect.DeepEqual(got, []string{"hub", "lamp", "x"}) {
		t.Errorf("devices with a model after the plug lost its: %v", got)
	}
}

// Latest names the devices of the latest config message alone (those with
// a model of the catalog's categories), which the gate asks the states of;
// Devices names every device the merged configs gave a model.
func TestAgentLatest(t *testing.T) {
	c := seed(t)
	var a Agent
	for _, tc := range []struct {
		config         string
		latest, merged []string
	}{
		{`{"devices":[{"id":"b","name":"B","default_name":"B","model":{"id":"m","manufacturer":"M","model":"X","category":"hub","features":["online"]}},` +
			`{"id":"a","name":"A","default_name":"A","model":{"id":"m","manufacturer":"M","model":"X","category":"hub","features":["online"]}}]}`,
			[]string{"a", "b"}, []string{"a", "b"}},
		{`{"devices":[{"id":"c","name":"C","default_name":"C","model":{"id":"m","manufacturer":"M","model":"X","category":"hub","features":["online"]}}]}`,
			[]string{"c"}, []string{"a", "b", "c"}},
		{`{"devices":[{"id":"d","name":"D","default_name":"D","model_id":"nope"}]}`, nil, []string{"a", "b", "c"}},
	} {
		if _, err := a.Config(c, []byte(tc.config)); err != nil {
			t.Fatal(err)
		}
		if got := a.Latest(); !reflect.DeepEqual(got, tc.latest) {
			t.Errorf("%s: latest %v, want %v", tc.config, got, tc.latest)
		}
		if got := a.Devices(); !reflect.DeepEqual(got, tc.merged) {
			t.Errorf("%s: devices %v, want %v", tc.config, got, tc.merged)
		}
	}
}
