package smarthome

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"partnerapi/internal/jsonmsg"
)

// Problem is one finding about one feature.
type Problem struct {
	// Feature is empty for a finding about the whole device.
	Feature string `json:"feature,omitempty"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// Reasons of problems.
const (
	ReasonOutOfRange   = "out_of_range"
	ReasonNotInEnum    = "not_in_enum"
	ReasonTypeMismatch = "type_mismatch"
	ReasonBadAllowed   = "bad_allowed_values"
	ReasonBadDepend    = "bad_dependency"
	ReasonStep         = "off_step"
	// ReasonNotWritable: a command sets a feature the device only reports
	// (access r) or sends as an event.
	ReasonNotWritable = "not_writable"
	// ReasonWriteOnly: a status reports a command-only feature (access w),
	// which has no state.
	ReasonWriteOnly = "write_only"
	// ReasonModelConflict: one model id comes with two feature sets in one
	// config, or an agent's config gives an inline model the id an earlier
	// config of the agent gave other features.
	ReasonModelConflict = "model_conflict"
	// ReasonParentNotInConfig: a child's parent_id names no device of the
	// config, which POST /v1/mqtt-gate/validate, knowing no earlier config
	// of the agent, cannot call wrong (checkConfig).
	ReasonParentNotInConfig = "parent_not_in_config"
)

// DeviceReport is what validation found about one device.
type DeviceReport struct {
	ID              string     `json:"id"`
	Category        string     `json:"category,omitempty"`
	Errors          []string   `json:"errors"`
	UnknownFeatures []string   `json:"unknown_features"`
	MissingRequired []string   `json:"missing_required"`
	MissingOneOf    [][]string `json:"missing_one_of"`
	InvalidValues   []Problem  `json:"invalid_values"`
	Warnings        []Problem  `json:"warnings"`
	// model is the id of the model a status was checked against, and
	// notInModel the unknown features that its category has but the model
	// lacks: they are worded apart from features outside the category.
	model      string
	notInModel []string
}

func newDeviceReport(id string) DeviceReport {
	return DeviceReport{ID: id, Errors: []string{}, UnknownFeatures: []string{}, MissingRequired: []string{},
		MissingOneOf: [][]string{}, InvalidValues: []Problem{}, Warnings: []Problem{}}
}

// OK reports whether nothing but warnings was found.
func (r *DeviceReport) OK() bool {
	return len(r.Errors)+len(r.UnknownFeatures)+len(r.MissingRequired)+len(r.MissingOneOf)+len(r.InvalidValues) == 0
}

// Report is the answer of POST /v1/mqtt-gate/validate.
type Report struct {
	Kind    string         `json:"kind"` // config | status
	Valid   bool           `json:"valid"`
	Devices []DeviceReport `json:"devices"`
}

// Validate checks an agent's MQTT message (§7) against the catalog: an
// up/config message ({"devices":[...]}, a list) or an up/status message
// ({"devices":{"<id>":{"states":[...]}}}, a map). Status messages carry no
// category, so category (may be "") names it; without one, features are
// checked against the whole catalog.
func (c *Catalog) Validate(msg []byte, category string) (*Report, error) {
	if category != "" && c.Categories[category] == nil {
		if _, _, err := c.validate(msg, func(string) known { return known{} }, nil); err != nil {
			return nil, err // a malformed body is reported before the category
		}
		return nil, &UnknownCategoryError{Category: category}
	}
	rep, _, err := c.validate(msg, func(string) known { return known{category: category} }, nil)
	return rep, err
}

// known is what a status check knows of a device: its category ("" for the
// whole catalog; only categories the catalog has) and, once an agent's
// config announced it, its model, whose features and allowed_values then
// apply.
type known struct {
	category string
	model    *Model
}

// validate is Validate with what is known of each status device given by
// deviceOf, which an Agent answers from its config. For a config it
// also returns each device's effective model (inline, or the catalog's by
// model_id), aligned with the report's devices: nil where the device has
// none.
//
// earlier is, for a config, what the agent's earlier configs announced
// (checkConfig); nil for none.
func (c *Catalog) validate(msg []byte, deviceOf func(id string) known, earlier *earlierConfig) (*Report, []*Model, error) {
	devs, err := devicesOf(msg)
	if err != nil {
		return nil, nil, err
	}
	rep := &Report{Devices: []DeviceReport{}}
	var models []*Model
	switch devs[0] {
	case '[':
		rep.Kind = "config"
		if rep.Devices, models, err = c.checkConfig(devs, earlier); err != nil {
			return nil, nil, err
		}
	case '{':
		rep.Kind = "status"
		m, err := parseStates(devs)
		if err != nil {
			return nil, nil, err
		}
		for _, id := range sortedKeys(m) {
			r := newDeviceReport(id)
			k := deviceOf(id)
			r.Category = k.category
			c.checkStates(&r, k.model, m[id].States, false)
			rep.Devices = append(rep.Devices, r)
		}
	default:
		return nil, nil, &InvalidError{Details: []string{"devices must be a list (up/config) or an object (up/status)"}}
	}
	rep.Valid = true
	for i := range rep.Devices {
		rep.Valid = rep.Valid && rep.Devices[i].OK()
	}
	return rep, models, nil
}

// devicesOf returns the "devices" member of an agent message, which every
// message of the protocol's device topics carries.
func devicesOf(msg []byte) (json.RawMessage, error) {
	var top struct {
		Devices json.RawMessage `json:"devices"`
	}
	if err := json.Unmarshal(msg, &top); err != nil {
		return nil, &InvalidError{Details: []string{"body is not a JSON object: " + jsonmsg.Of(err)}}
	}
	devs := bytes.TrimSpace(top.Devices)
	if len(devs) == 0 || string(devs) == "null" {
		return nil, &InvalidError{Details: []string{"devices is required"}}
	}
	return devs, nil
}

func (r *DeviceReport) addValueProblem(p Problem) {
	if p.Reason == ReasonStep {
		r.Warnings = append(r.Warnings, p)
		return
	}
	r.InvalidValues = append(r.InvalidValues, p)
}

// CheckModel lists why a model may not enter the catalog; warnings (ranges
// wider than the defaults, inconsistency #7) do not count.
func (c *Catalog) CheckModel(m *Model) []string {
	r := c.checkModel(m)
	out := append([]string{}, r.Errors...)
	if strings.TrimSpace(m.ID) != m.ID || m.ID == "" {
		out = append(out, "id must be non-empty without surrounding spaces")
	}
	if m.Manufacturer == "" || m.Model == "" {
		out = append(out, "manufacturer and model are required")
	}
	return append(out, r.featureProblems()...)
}

// featureProblems words what the report found about features, one line
// each: unknown, missing, out of the feature's values.
func (r *DeviceReport) featureProblems() []string {
	var out []string
	for _, f := range r.UnknownFeatures {
		if slices.Contains(r.notInModel, f) {
			out = append(out, fmt.Sprintf("feature '%s' is not among the features of model '%s'", jsonmsg.Echo(f), jsonmsg.Echo(r.model)))
			continue
		}
		if r.Category == "" {
			out = append(out, fmt.Sprintf("feature '%s' is not in the catalog", jsonmsg.Echo(f)))
			continue
		}
		out = append(out, fmt.Sprintf("feature '%s' is not in category '%s'", jsonmsg.Echo(f), jsonmsg.Echo(r.Category)))
	}
	for _, f := range r.MissingRequired {
		out = append(out, fmt.Sprintf("required feature '%s' is missing", f))
	}
	for _, g := range r.MissingOneOf {
		out = append(out, fmt.Sprintf("one of %s is required", strings.Join(g, ", ")))
	}
	for _, p := range r.InvalidValues {
		out = append(out, p.Feature+": "+p.Message)
	}
	return out
}

func (c *Catalog) checkModel(m *Model) DeviceReport {
	r := newDeviceReport(m.ID)
	r.Category = m.Category
	cat := c.Categories[m.Category]
	if cat == nil {
		r.Errors = append(r.Errors, fmt.Sprintf("category '%s' is not supported", jsonmsg.Echo(m.Category)))
		return r
	}
	has := map[string]bool{}
	for _, f := range m.Features {
		if has[f] {
			r.Errors = append(r.Errors, fmt.Sprintf("feature '%s' is listed twice", jsonmsg.Echo(f)))
		}
		has[f] = true
		if !cat.Has(f) {
			r.UnknownFeatures = append(r.UnknownFeatures, jsonmsg.Echo(f))
		}
	}
	for _, f := range cat.Required {
		if !has[f] {
			r.MissingRequired = append(r.MissingRequired, f)
		}
	}
	for _, g := range cat.OneOf {
		found := false
		for _, f := range g {
			found = found || has[f]
		}
		if !found {
			r.MissingOneOf = append(r.MissingOneOf, g)
		}
	}
	for _, name := range sortedKeys(m.AllowedValues) {
		av := m.AllowedValues[name]
		f := c.Features[name]
		switch {
		case !has[name] || f == nil:
			r.InvalidValues = append(r.InvalidValues, Problem{jsonmsg.Echo(name), ReasonBadAllowed, "allowed_values key is not among the model's features"})
		default:
			for _, p := range checkAllowed(f, av) {
				if p.Reason == ReasonOutOfRange {
					r.Warnings = append(r.Warnings, p)
				} else {
					r.InvalidValues = append(r.InvalidValues, p)
				}
			}
		}
	}
	for _, name := range sortedKeys(m.Dependencies) {
		d := m.Dependencies[name]
		key := c.Features[d.Key]
		switch {
		case !has[name]:
			r.InvalidValues = append(r.InvalidValues, Problem{jsonmsg.Echo(name), ReasonBadDepend, "dependent feature is not among the model's features"})
		case !has[d.Key] || key == nil:
			r.InvalidValues = append(r.InvalidValues, Problem{jsonmsg.Echo(name), ReasonBadDepend, fmt.Sprintf("controlling feature '%s' is not among the model's features", jsonmsg.Echo(d.Key))})
		case len(d.Value) == 0:
			r.InvalidValues = append(r.InvalidValues, Problem{jsonmsg.Echo(name), ReasonBadDepend, "dependency lists no values"})
		default:
			for _, v := range d.Value {
				if p := checkValue(key, m.AllowedValues, v); p != nil {
					p.Message = "dependency on " + d.Key + ": " + p.Message
					r.InvalidValues = append(r.InvalidValues, Problem{jsonmsg.Echo(name), ReasonBadDepend, p.Message})
				}
			}
		}
	}
	return r
}

// checkAllowed checks one allowed_values entry against its feature: the type
// must match, ENUM lists must be subsets; ranges wider than the default are
// reported as out_of_range, which callers treat as a warning (#7).
func checkAllowed(f *Feature, av AllowedValue) []Problem {
	bad := func(reason, msg string) []Problem { return []Problem{{f.Name, reason, msg}} }
	if av.Type != f.DataType {
		return bad(ReasonTypeMismatch, fmt.Sprintf("allowed_values type %s, feature is %s", av.Type, f.DataType))
	}
	// An entry is {"type": T, "<t>_values": ...} (reference §4). Another
	// type's member beside its own would be stored and served as sent,
	// leaving agents two ranges or a range and a list for one feature and
	// no rule for which applies.
	if foreign := av.foreignMembers(); len(foreign) > 0 && (f.DataType == Integer || f.DataType == Float || f.DataType == Enum) {
		return bad(ReasonBadAllowed, fmt.Sprintf("a %s entry carries %s of another type", f.DataType, strings.Join(foreign, ", ")))
	}
	switch f.DataType {
	case Integer:
		iv := av.IntegerValues
		if iv == nil {
			return bad(ReasonBadAllowed, "integer_values is required")
		}
		if iv.absent != "" {
			return bad(ReasonBadAllowed, "integer_values needs min and max, it has no "+iv.absent)
		}
		if iv.Min > iv.Max || (iv.Step != nil && *iv.Step <= 0) {
			return bad(ReasonBadAllowed, "integer_values needs min <= max and a positive step")
		}
		if f.Range != nil && (float64(iv.Min) < f.Range.Min || float64(iv.Max) > f.Range.Max) {
			return bad(ReasonOutOfRange, fmt.Sprintf("range %d..%d is wider than the default %g..%g", iv.Min, iv.Max, f.Range.Min, f.Range.Max))
		}
	case Float:
		if av.FloatValues != nil && av.FloatValues.absent != "" {
			return bad(ReasonBadAllowed, "float_values needs min and max, it has no "+av.FloatValues.absent)
		}
		if av.FloatValues == nil || av.FloatValues.Min > av.FloatValues.Max {
			return bad(ReasonBadAllowed, "float_values needs min <= max")
		}
		lo, hi := float64(av.FloatValues.Min), float64(av.FloatValues.Max)
		if f.Range != nil && (lo < f.Range.Min || hi > f.Range.Max) {
			return bad(ReasonOutOfRange, fmt.Sprintf("range %g..%g is wider than the default %g..%g", lo, hi, f.Range.Min, f.Range.Max))
		}
	case Enum:
		if av.EnumValues == nil || len(av.EnumValues.Values) == 0 {
			return bad(ReasonBadAllowed, "enum_values.values is required")
		}
		var out []Problem
		for i, v := range av.EnumValues.Values {
			// A subset lists each value once, as a model lists each
			// feature once: served twice, an app would offer it twice.
			if slices.Contains(av.EnumValues.Values[:i], v) {
				out = append(out, Problem{f.Name, ReasonBadAllowed, fmt.Sprintf("'%s' is listed twice in enum_values", jsonmsg.Echo(v))})
				continue
			}
			if !f.allows(v) {
				out = append(out, Problem{f.Name, ReasonNotInEnum, fmt.Sprintf("'%s' is not one of %s", jsonmsg.Echo(v), strings.Join(f.Enum, ", "))})
			}
		}
		return out
	default:
		return bad(ReasonBadAllowed, "allowed_values applies only to INTEGER, FLOAT and ENUM")
	}
	return nil
}

// foreignMembers names the members av has of the shapes of types other
// than its own, in integer, float, enum order.
func (av AllowedValue) foreignMembers() []string {
	var out []string
	if av.IntegerValues != nil && av.Type != Integer {
		out = append(out, "integer_values")
	}
	if av.FloatValues != nil && av.Type != Float {
		out = append(out, "float_values")
	}
	if av.EnumValues != nil && av.Type != Enum {
		out = append(out, "enum_values")
	}
	return out
}

func (f *Feature) allows(v string) bool {
	for _, e := range f.Enum {
		if e == v {
			return true
		}
	}
	for _, e := range f.Tolerated {
		if e == v {
			return true
		}
	}
	return false
}

// checkValue checks a value against its feature and, when the model narrows
// it, the model's allowed_values.
func checkValue(f *Feature, allowed map[string]AllowedValue, v Value) *Problem {
	bad := func(reason, format string, a ...any) *Problem {
		return &Problem{f.Name, reason, fmt.Sprintf(format, a...)}
	}
	if r := v.unreadable(); r != "" {
		return bad(ReasonTypeMismatch, "%s", r)
	}
	if v.Type != f.DataType {
		return bad(ReasonTypeMismatch, "value type %q, feature is %s", jsonmsg.Echo(v.Type), f.DataType)
	}
	if !v.present() {
		return bad(ReasonTypeMismatch, "value has no %s_value", strings.ToLower(v.Type))
	}
	av, narrowed := allowed[f.Name]
	switch f.DataType {
	case Integer:
		n := *v.Integer
		lo, hi, step := math.Inf(-1), math.Inf(1), 0.0
		if f.Range != nil {
			lo, hi, step = f.Range.Min, f.Range.Max, f.Range.Step
		}
		if narrowed && av.IntegerValues != nil {
			lo, hi = float64(av.IntegerValues.Min), float64(av.IntegerValues.Max)
			if av.IntegerValues.Step != nil {
				step = float64(*av.IntegerValues.Step)
			}
		}
		if float64(n) < lo || float64(n) > hi {
			return bad(ReasonOutOfRange, "%d is outside %g..%g", n, lo, hi)
		}
		if step > 1 && !math.IsInf(lo, -1) && math.Mod(float64(n)-lo, step) != 0 {
			return bad(ReasonStep, "%d is not on step %g from %g", n, step, lo)
		}
	case Float:
		x := *v.Float
		lo, hi := math.Inf(-1), math.Inf(1)
		if f.Range != nil {
			lo, hi = f.Range.Min, f.Range.Max
		}
		if narrowed && av.FloatValues != nil {
			lo, hi = float64(av.FloatValues.Min), float64(av.FloatValues.Max)
		}
		if math.IsNaN(x) || x < lo || x > hi {
			return bad(ReasonOutOfRange, "%g is outside %g..%g", x, lo, hi)
		}
	case Enum:
		e := *v.Enum
		if !f.allows(e) {
			return bad(ReasonNotInEnum, "'%s' is not one of %s", jsonmsg.Echo(e), strings.Join(f.Enum, ", "))
		}
		if narrowed && av.EnumValues != nil {
			in := false
			for _, x := range av.EnumValues.Values {
				in = in || x == e
			}
			if !in {
				return bad(ReasonNotInEnum, "'%s' is not one of the model's %s", jsonmsg.Echo(e), strings.Join(av.EnumValues.Values, ", "))
			}
		}
	case Colour:
		for _, ch := range []struct {
			name string
			x    float64
		}{{"h", v.Colour.H}, {"s", v.Colour.S}, {"v", v.Colour.V}} {
			if r, ok := f.Colour[ch.name]; ok && (ch.x < r[0] || ch.x > r[1]) {
				return bad(ReasonOutOfRange, "%s=%g is outside %g..%g", ch.name, ch.x, r[0], r[1])
			}
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
