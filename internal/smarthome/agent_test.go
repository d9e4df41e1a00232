package smarthome

import (
	"errors"
	"testing"
)

// An agent's status is checked against the categories of its last config:
// a lamp's brightness passes and a socket's is unknown; a device of an
// earlier config that the new one leaves out is judged by the whole
// catalog; malformed messages are InvalidError.
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
	rep, err = a.Status(c, []byte(status))
	if err != nil || rep.Valid || len(rep.Devices) != 2 {
		t.Fatalf("status: %+v, %v", rep, err)
	}
	if lamp, plug := rep.Devices[0], rep.Devices[1]; !lamp.OK() || lamp.Category != "light" ||
		len(plug.UnknownFeatures) != 1 || plug.UnknownFeatures[0] != "light_brightness" || plug.Category != "socket" {
		t.Fatalf("lamp %+v, plug %+v", lamp, plug)
	}
	// A new config without the plug: its brightness is now judged by the
	// whole catalog, where the feature exists.
	if _, err := a.Config(c, []byte(`{"devices":[{"id":"lamp","name":"Lamp","default_name":"Lamp","model":{"id":"m1","manufacturer":"M","model":"L","category":"light","features":["online","on_off","light_brightness"]}}]}`)); err != nil {
		t.Fatal(err)
	}
	if rep, err := a.Status(c, []byte(status)); err != nil || !rep.Valid {
		t.Fatalf("status after the plug left: %+v, %v", rep, err)
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
	})
}
