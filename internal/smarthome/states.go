package smarthome

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"partnerapi/internal/jsonmsg"
)

// state is one entry of a device's states in up/status and down/commands
// (reference §7): a feature and its value.
type state struct {
	Key   string `json:"key"`
	Value Value  `json:"value"`
}

// deviceStates is one device of an up/status or down/commands message.
type deviceStates struct {
	States []state `json:"states"`
}

// parseStates reads the "devices" object of an up/status or down/commands
// message: device id → states.
func parseStates(devs json.RawMessage) (map[string]deviceStates, error) {
	var m map[string]deviceStates
	if err := json.Unmarshal(devs, &m); err != nil {
		return nil, &InvalidError{Details: []string{"devices: " + jsonmsg.Of(err)}}
	}
	return m, nil
}

// checkStates checks a device's states against the catalog and, as far as
// they are known, the device's category (r.Category) and model: a feature
// the model does not list is unknown to the device, and the model's
// allowed_values replace the feature's default range, so a boiler whose
// model allows hvac_temp_set 25..80 takes 60, which the default 5..50 does
// not (#7: the wider range only warned when the config was checked). A
// dependent feature whose controlling feature the same message sets to a
// value the dependency does not list is a finding: an error in a command,
// which would ask for what the device cannot do, a warning in a status,
// which only reports it.
func (c *Catalog) checkStates(r *DeviceReport, m *Model, states []state, command bool) {
	var allowed map[string]AllowedValue
	var has map[string]bool
	if m != nil {
		r.model, allowed = m.ID, m.AllowedValues
		has = make(map[string]bool, len(m.Features))
		for _, f := range m.Features {
			has[f] = true
		}
	}
	cat := c.Categories[r.Category]
	checked := make(map[string]Value, len(states))
	for _, s := range states {
		f := c.Features[s.Key]
		// An unknown key is the client's, of any length: the report
		// quotes it through jsonmsg.Echo, as its messages do.
		if f == nil || (cat != nil && !cat.Has(s.Key)) {
			r.UnknownFeatures = append(r.UnknownFeatures, jsonmsg.Echo(s.Key))
			continue
		}
		if has != nil && !has[s.Key] {
			r.UnknownFeatures = append(r.UnknownFeatures, s.Key)
			r.notInModel = append(r.notInModel, s.Key)
			continue
		}
		// Access (reference §6.2): a command may only set what the device
		// can change; a status that reports a command-only feature is
		// flagged but not refused, since the value harms nothing.
		if command && !f.Commandable() {
			msg := "access r: the device reports it, it cannot be commanded"
			if f.Access == AccessEvent {
				msg = "access event: the device sends it as a notification, it cannot be commanded"
			}
			r.InvalidValues = append(r.InvalidValues, Problem{jsonmsg.Echo(s.Key), ReasonNotWritable, msg})
			continue
		}
		if !command && f.Access == AccessWrite {
			r.Warnings = append(r.Warnings, Problem{jsonmsg.Echo(s.Key), ReasonWriteOnly,
				"access w: command-only, it has no state to report"})
		}
		if p := checkValue(f, allowed, s.Value); p != nil {
			r.addValueProblem(*p)
			continue
		}
		checked[s.Key] = s.Value
	}
	deps := dependencies(cat, m)
	for _, s := range states {
		d, ok := deps[s.Key]
		if _, valid := checked[s.Key]; !ok || !valid {
			continue
		}
		key, set := checked[d.Key]
		if !set || slices.ContainsFunc(d.Value, key.equal) {
			continue
		}
		want := make([]string, len(d.Value))
		for i, v := range d.Value {
			want[i] = v.text()
		}
		p := Problem{jsonmsg.Echo(s.Key), ReasonBadDepend, fmt.Sprintf("available only while %s is %s; the message sets it to %s",
			d.Key, strings.Join(want, " or "), jsonmsg.Echo(key.text()))}
		if command {
			r.InvalidValues = append(r.InvalidValues, p)
		} else {
			r.Warnings = append(r.Warnings, p)
		}
	}
}

// dependencies are the dependencies that apply to a device: the category's
// (reference §4: light_colour on light_mode for light and led_strip), each
// replaced by the model's own for the same feature, kept only where the
// model has both features.
func dependencies(cat *Category, m *Model) map[string]Dependency {
	if cat == nil {
		return nil
	}
	if m == nil {
		return cat.Dependencies
	}
	out := map[string]Dependency{}
	for _, deps := range []map[string]Dependency{cat.Dependencies, m.Dependencies} {
		for f, d := range deps {
			if slices.Contains(m.Features, f) && slices.Contains(m.Features, d.Key) {
				out[f] = d
			}
		}
	}
	return out
}
