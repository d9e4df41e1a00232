package smarthome

import (
	"fmt"
	"strings"
	"testing"
)

// The provider caches models by id (reference §7), across an agent's
// messages: an inline model whose id an earlier config of the agent gave
// other features is a model_conflict warning (the message stays valid),
// whether the device is the same, another one, or the config is the
// answer to a config request; the same features, a new id or a conflict
// within the message alone are not that warning.
func TestAgentModelConflictAcrossConfigs(t *testing.T) {
	c := seed(t)
	const (
		lamp = `{"id":"lamp","name":"Lamp","default_name":"Lamp","model":{"id":"m1","manufacturer":"M","model":"L","category":"light","features":[%s]}}`
		desk = `{"id":"desk","name":"Desk","default_name":"Desk","model":{"id":"%s","manufacturer":"M","model":"L","category":"light","features":[%s]}}`
		two  = `"online","on_off"`
		more = `"online","on_off","light_brightness"`
	)
	for _, tc := range []struct {
		name    string
		request bool // the second config answers a config request
		second  string
		// want: the device warned and the device its message names as
		// the earlier one; "" for no warning.
		warned, earlier string
	}{
		{"the same device with more features", false, fmt.Sprintf(lamp, more), "lamp", "lamp"},
		{"another device, the id with more features", false, fmt.Sprintf(desk, "m1", more), "desk", "lamp"},
		{"the answer to a config request too", true, fmt.Sprintf(lamp, more), "lamp", "lamp"},
		{"the same features", false, fmt.Sprintf(desk, "m1", two), "", ""},
		{"a new id", false, fmt.Sprintf(desk, "m9", more), "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var a Agent
			if rep, err := a.Config(c, []byte(`{"devices":[`+fmt.Sprintf(lamp, two)+`]}`)); err != nil || !rep.Valid {
				t.Fatalf("first config: %+v, %v", rep, err)
			}
			if tc.request {
				a.ConfigRequested()
			}
			rep, err := a.Config(c, []byte(`{"devices":[`+tc.second+`]}`))
			if err != nil || !rep.Valid {
				t.Fatalf("second config: %+v, %v", rep, err)
			}
			var got []Problem
			for _, d := range rep.Devices {
				for _, w := range d.Warnings {
					if w.Reason == ReasonModelConflict {
						if d.ID != tc.warned {
							t.Errorf("device %s warned, want %q", d.ID, tc.warned)
						}
						got = append(got, w)
					}
				}
			}
			switch {
			case tc.warned == "" && len(got) > 0:
				t.Errorf("warnings %+v, want none", got)
			case tc.warned != "" && (len(got) != 1 || !strings.Contains(got[0].Message, "in device '"+tc.earlier+"' of an earlier config")):
				t.Errorf("warnings %+v, want one naming the earlier device %s", got, tc.earlier)
			}
		})
	}

	// Within one message a conflict is the message's own warning, once.
	var a Agent
	if _, err := a.Config(c, []byte(`{"devices":[`+fmt.Sprintf(lamp, two)+`]}`)); err != nil {
		t.Fatal(err)
	}
	rep, err := a.Config(c, []byte(`{"devices":[`+fmt.Sprintf(lamp, two)+`,`+fmt.Sprintf(desk, "m1", more)+`]}`))
	if err != nil {
		t.Fatal(err)
	}
	if w := rep.Devices[1].Warnings; len(w) != 1 || w[0].Reason != ReasonModelConflict || strings.Contains(w[0].Message, "earlier config") {
		t.Errorf("a conflict within the message: %+v", w)
	}
}
