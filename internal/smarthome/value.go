package smarthome

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"partnerapi/internal/jsonmsg"
	"strconv"
	"strings"
)

// HSV is a COLOUR value.
type HSV struct {
	H float64 `json:"h"`
	S float64 `json:"s"`
	V float64 `json:"v"`
}

// Value is a typed value object {"type": T, "<t>_value": ...} (§4).
type Value struct {
	Type    string
	Bool    *bool
	Integer *int64
	Float   *float64
	String  *string
	Enum    *string
	Colour  *HSV
	// unread says why a member could not be read, by its name ("" for the
	// value itself or its type): checkValue reports it as a type_mismatch
	// when it is the value's own payload.
	unread map[string]string
}

// MarshalJSON emits integers as strings and floats as numbers (#10), and
// only the payload field of the value's type: a value read with stray
// fields (an ENUM that also carried a bool_value) goes out clean. "type"
// comes first, as in every value the reference and the provider's pages
// show ({"type":"ENUM","enum_value":"colour"}): member order means nothing
// to a JSON parser, but the models and the commands we send then read as
// the documentation does, byte for byte.
func (v Value) MarshalJSON() ([]byte, error) {
	var out struct {
		Type    string   `json:"type"`
		Bool    *bool    `json:"bool_value,omitempty"`
		Integer *string  `json:"integer_value,omitempty"`
		Float   *float64 `json:"float_value,omitempty"`
		String  *string  `json:"string_value,omitempty"`
		Enum    *string  `json:"enum_value,omitempty"`
		Colour  *HSV     `json:"colour_value,omitempty"`
	}
	out.Type = v.Type
	switch {
	case v.Type == Bool && v.Bool != nil:
		out.Bool = v.Bool
	case v.Type == Integer && v.Integer != nil:
		i := strconv.FormatInt(*v.Integer, 10)
		out.Integer = &i
	case v.Type == Float && v.Float != nil:
		out.Float = v.Float
	case v.Type == String && v.String != nil:
		out.String = v.String
	case v.Type == Enum && v.Enum != nil:
		out.Enum = v.Enum
	case v.Type == Colour && v.Colour != nil:
		out.Colour = v.Colour
	}
	return json.Marshal(out)
}

// UnmarshalJSON accepts integers and floats both as numbers and as strings
// (#10). What it cannot read (a value that is no object, a member of the
// wrong JSON type, an integer_value that is no int64) is not an error: the
// reason is kept for checkValue, which reports it as a type_mismatch on
// the value's feature, so that one malformed value costs its feature a
// finding instead of the whole message its report.
func (v *Value) UnmarshalJSON(b []byte) error {
	*v = Value{}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(b, &members); err != nil || members == nil {
		v.fail("", "value is not an object")
		return nil
	}
	read := func(name string, dst any, want string) {
		raw, ok := members[name]
		if !ok || string(raw) == "null" {
			return
		}
		if err := json.Unmarshal(raw, dst); err != nil {
			v.fail(name, fmt.Sprintf("%s %s is not %s", name, jsonmsg.Echo(string(raw)), want))
		}
	}
	read("type", &v.Type, "a string")
	read("bool_value", &v.Bool, "a boolean")
	read("string_value", &v.String, "a string")
	read("enum_value", &v.Enum, "a string")
	if raw := members["colour_value"]; len(raw) > 0 && string(raw) != "null" {
		v.readColour(raw)
	}
	if raw := members["integer_value"]; len(raw) > 0 && string(raw) != "null" {
		n, err := strconv.ParseInt(string(bytes.Trim(raw, `"`)), 10, 64)
		if err != nil {
			v.fail("integer_value", fmt.Sprintf("integer_value %s is not an int64", jsonmsg.Echo(string(raw))))
		} else {
			v.Integer = &n
		}
	}
	if raw := members["float_value"]; len(raw) > 0 && string(raw) != "null" {
		f, err := strconv.ParseFloat(string(bytes.Trim(raw, `"`)), 64)
		if err != nil {
			v.fail("float_value", fmt.Sprintf("float_value %s is not a number", jsonmsg.Echo(string(raw))))
		} else {
			v.Float = &f
		}
	}
	return nil
}

// readColour reads colour_value, which must give all three of h, s and v
// as numbers (reference §4's {"h": 0..360, "s": 0..1000, "v": 100..1000}).
// A component left out or null is a value that cannot be read, not the
// component 0: read as 0, {"h": 10, "v": 100} passed as a white of hue 10
// that the agent never sent, and a command carrying it reached the agent
// as sent, without its s. Other members are ignored, as on every value.
func (v *Value) readColour(raw json.RawMessage) {
	const want = "an object of numbers h, s, v"
	var c struct{ H, S, V *float64 }
	if err := json.Unmarshal(raw, &c); err != nil {
		v.fail("colour_value", fmt.Sprintf("colour_value %s is not %s", jsonmsg.Echo(string(raw)), want))
		return
	}
	var missing []string
	for _, m := range []struct {
		name string
		p    *float64
	}{{"h", c.H}, {"s", c.S}, {"v", c.V}} {
		if m.p == nil {
			missing = append(missing, m.name)
		}
	}
	if len(missing) > 0 {
		v.fail("colour_value", fmt.Sprintf("colour_value %s is not %s: it has no %s", jsonmsg.Echo(string(raw)), want, strings.Join(missing, ", ")))
		return
	}
	v.Colour = &HSV{H: *c.H, S: *c.S, V: *c.V}
}

func (v *Value) fail(member, reason string) {
	if v.unread == nil {
		v.unread = map[string]string{}
	}
	v.unread[member] = reason
}

// unreadable is why the value as its type needs it could not be read, ""
// when it could: a member other than the type's own payload does not count.
func (v *Value) unreadable() string {
	if r := v.unread[""]; r != "" {
		return r
	}
	if r := v.unread["type"]; r != "" {
		return r
	}
	return v.unread[strings.ToLower(v.Type)+"_value"]
}

// present reports whether the payload field for v.Type is set.
func (v *Value) present() bool {
	switch v.Type {
	case Bool:
		return v.Bool != nil
	case Integer:
		return v.Integer != nil
	case Float:
		return v.Float != nil
	case String:
		return v.String != nil
	case Enum:
		return v.Enum != nil
	case Colour:
		return v.Colour != nil
	}
	return false
}

// equal reports whether two values are the same value of the same type.
func (v Value) equal(w Value) bool {
	if v.Type != w.Type || !v.present() || !w.present() {
		return false
	}
	switch v.Type {
	case Bool:
		return *v.Bool == *w.Bool
	case Integer:
		return *v.Integer == *w.Integer
	case Float:
		return *v.Float == *w.Float
	case String:
		return *v.String == *w.String
	case Enum:
		return *v.Enum == *w.Enum
	default:
		return *v.Colour == *w.Colour
	}
}

// text words a value for a finding: its payload without the JSON around it.
func (v Value) text() string {
	if !v.present() {
		return "a " + v.Type + " without its value"
	}
	switch v.Type {
	case Bool:
		return strconv.FormatBool(*v.Bool)
	case Integer:
		return strconv.FormatInt(*v.Integer, 10)
	case Float:
		return strconv.FormatFloat(*v.Float, 'g', -1, 64)
	case String:
		return *v.String
	case Enum:
		return *v.Enum
	default:
		return fmt.Sprintf("h=%g s=%g v=%g", v.Colour.H, v.Colour.S, v.Colour.V)
	}
}

// Dependency makes a feature available only while Key holds one of Value.
type Dependency struct {
	Key   string  `json:"key"`
	Value []Value `json:"value"`
}

// UnmarshalJSON accepts the list as "value" (every example) or "values"
// (the provider's field table) — inconsistency #1; it is emitted as "value".
func (d *Dependency) UnmarshalJSON(b []byte) error {
	var raw struct {
		Key    string  `json:"key"`
		Value  []Value `json:"value"`
		Values []Value `json:"values"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	// An empty "value" next to a filled "values" is a list under the
	// other name, not an empty one: either name is the list, whichever
	// holds it.
	d.Key, d.Value = raw.Key, raw.Value
	if len(d.Value) == 0 && len(raw.Values) > 0 {
		d.Value = raw.Values
	}
	return nil
}

// IntString is an int64 written as a decimal string (integer_values members),
// read from a string or a number.
type IntString int64

func (n IntString) MarshalJSON() ([]byte, error) {
	return json.Marshal(strconv.FormatInt(int64(n), 10))
}

func (n *IntString) UnmarshalJSON(b []byte) error {
	v, err := strconv.ParseInt(string(bytes.Trim(b, `"`)), 10, 64)
	if err != nil {
		return fmt.Errorf("%s is not an int64", b)
	}
	*n = IntString(v)
	return nil
}

// IntegerValues narrows an INTEGER feature.
type IntegerValues struct {
	Min  IntString  `json:"min"`
	Max  IntString  `json:"max"`
	Step *IntString `json:"step,omitempty"`
	// absent names the bounds the JSON read lacked ("min", "max", "min
	// and max"); checkAllowed refuses such a range.
	absent string
}

// UnmarshalJSON reads the bounds noting which are absent (or null): a
// missing bound is no bound of 0. Every range the reference shows has both
// (§4), and read as 0 a range without its min would narrow the feature to
// start at 0 and one without its max to 0..0, which the model would then
// serve to agents as its allowed_values.
func (iv *IntegerValues) UnmarshalJSON(b []byte) error {
	var raw struct {
		Min  *IntString `json:"min"`
		Max  *IntString `json:"max"`
		Step *IntString `json:"step"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*iv = IntegerValues{Step: raw.Step, absent: absentBounds(raw.Min == nil, raw.Max == nil)}
	if raw.Min != nil {
		iv.Min = *raw.Min
	}
	if raw.Max != nil {
		iv.Max = *raw.Max
	}
	return nil
}

// absentBounds words which of a range's bounds are missing, "" for none.
func absentBounds(noMin, noMax bool) string {
	switch {
	case noMin && noMax:
		return "min and max"
	case noMin:
		return "min"
	case noMax:
		return "max"
	}
	return ""
}

// FloatNumber is a float_values member: written as a number (§4), read
// from a number or a numeric string. integer_values members are strings
// and are read from numbers too, and the provider writes a float_value as
// a string once (#10): an agent that strings its float bounds as it must
// its integer ones has its model read, not the whole message refused.
type FloatNumber float64

func (n FloatNumber) MarshalJSON() ([]byte, error) {
	return json.Marshal(float64(n))
}

func (n *FloatNumber) UnmarshalJSON(b []byte) error {
	v, err := strconv.ParseFloat(string(bytes.Trim(b, `"`)), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("%s is not a number", b)
	}
	*n = FloatNumber(v)
	return nil
}

// FloatValues narrows a FLOAT feature.
type FloatValues struct {
	Min FloatNumber `json:"min"`
	Max FloatNumber `json:"max"`
	// absent is as in IntegerValues.
	absent string
}

// UnmarshalJSON reads the bounds noting which are absent, as
// IntegerValues does and for its reason.
func (fv *FloatValues) UnmarshalJSON(b []byte) error {
	var raw struct {
		Min *FloatNumber `json:"min"`
		Max *FloatNumber `json:"max"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*fv = FloatValues{absent: absentBounds(raw.Min == nil, raw.Max == nil)}
	if raw.Min != nil {
		fv.Min = *raw.Min
	}
	if raw.Max != nil {
		fv.Max = *raw.Max
	}
	return nil
}

// EnumValues narrows an ENUM feature to a subset.
type EnumValues struct {
	Values []string `json:"values"`
}

// AllowedValue is one entry of a model's allowed_values (§4).
type AllowedValue struct {
	Type          string         `json:"type"`
	IntegerValues *IntegerValues `json:"integer_values,omitempty"`
	FloatValues   *FloatValues   `json:"float_values,omitempty"`
	EnumValues    *EnumValues    `json:"enum_values,omitempty"`
}
