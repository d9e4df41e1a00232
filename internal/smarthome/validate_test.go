package smarthome

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

func seed(t testing.TB) *Catalog {
	t.Helper()
	c, err := Seed()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSeedCatalogShape(t *testing.T) {
	c := seed(t)
	if len(c.Categories) != 29 || len(c.Features) != 96 {
		t.Fatalf("%d categories, %d features; want 29, 96", len(c.Categories), len(c.Features))
	}
	for _, n := range c.CategoryNames() {
		if !c.Categories[n].IsRequired("online") {
			t.Errorf("%s: online not required", n)
		}
	}
	if got := c.Features["pir"].DataType; got != Enum {
		t.Errorf("pir is %s, want ENUM", got)
	}
	// Access as reference §6.2 counts it: unlock and reject_call are
	// command-only.
	count := map[string]int{}
	for _, f := range c.Features {
		count[f.Access]++
	}
	if want := map[string]int{"r": 36, "rw": 27, "event": 18, "w": 11, "rw?": 4}; !reflect.DeepEqual(count, want) {
		t.Errorf("access counts %v, want %v", count, want)
	}
	for _, n := range []string{"unlock", "reject_call"} {
		if f := c.Features[n]; f.Access != AccessWrite || !f.Commandable() {
			t.Errorf("%s: access %q", n, f.Access)
		}
	}
	if len(c.Models) < 4 {
		t.Errorf("only %d seed models", len(c.Models))
	}
	// One model per category at least (reference §5): the placeholders
	// carry the category's example allowed_values.
	byCategory := map[string]*Model{}
	for i, m := range c.Models {
		byCategory[m.Category] = &c.Models[i]
		if d := c.CheckModel(&c.Models[i]); len(d) > 0 {
			t.Errorf("seed model %s: %v", m.ID, d)
		}
	}
	if len(byCategory) != len(c.Categories) {
		t.Errorf("seed models cover %d of %d categories", len(byCategory), len(c.Categories))
	}
	kettle := byCategory["kettle"]
	if kettle == nil || kettle.ID != "QWERTY124-kettle" || kettle.Manufacturer != "Xiaqara" ||
		!reflect.DeepEqual(kettle.Features, c.Categories["kettle"].Features) {
		t.Fatalf("kettle placeholder %+v", kettle)
	}
	if iv := kettle.AllowedValues["kitchen_water_temperature_set"].IntegerValues; iv == nil || iv.Min != 60 || iv.Max != 100 {
		t.Errorf("kettle placeholder allowed_values %+v", kettle.AllowedValues)
	}
}

// TestValidate runs the messages in testdata/validate/*.json: each file holds
// the message, the category query and the expected report.
func TestValidate(t *testing.T) {
	c := seed(t)
	eachGolden(t, "testdata/validate/*.json", 5, func(t *testing.T, tc struct {
		Category string          `json:"category"`
		Message  json.RawMessage `json:"message"`
		Want     json.RawMessage `json:"want"`
	}) {
		rep, err := c.Validate(tc.Message, tc.Category)
		if err != nil {
			t.Fatal(err)
		}
		gb, _ := json.Marshal(rep)
		sameJSON(t, "report", gb, tc.Want)
	})
}

func TestValidateRejectsMalformed(t *testing.T) {
	c := seed(t)
	for _, tc := range []struct{ name, msg, cat string }{
		{"not json", `{`, ""},
		{"no devices", `{}`, ""},
		{"devices scalar", `{"devices":3}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Validate([]byte(tc.msg), tc.cat)
			var inv *InvalidError
			if !errors.As(err, &inv) {
				t.Fatalf("err = %v, want InvalidError", err)
			}
		})
	}
	_, err := c.Validate([]byte(`{"devices":{}}`), "toaster")
	var unknown *UnknownCategoryError
	if !errors.Is(err, ErrNotFound) || !errors.As(err, &unknown) || unknown.Category != "toaster" {
		t.Errorf("unknown category: %v", err)
	}
}

func TestCheckModel(t *testing.T) {
	c := seed(t)
	good := Model{ID: "m1", Manufacturer: "X", Model: "Y", Category: "relay", Features: []string{"online", "on_off"}}
	if d := c.CheckModel(&good); len(d) != 0 {
		t.Fatalf("good model: %v", d)
	}
	for _, tc := range []struct {
		name string
		edit func(m *Model)
	}{
		{"unknown category", func(m *Model) { m.Category = "toaster" }},
		{"missing required", func(m *Model) { m.Features = []string{"online"} }},
		{"unknown feature", func(m *Model) { m.Features = append(m.Features, "light_mode") }},
		{"spaces in id", func(m *Model) { m.ID = "m1 " }},
		{"allowed key outside features", func(m *Model) {
			m.AllowedValues = map[string]AllowedValue{"power": {Type: Integer, IntegerValues: &IntegerValues{Min: 1, Max: 2}}}
		}},
		{"enum value listed twice", func(m *Model) {
			m.Category, m.Features = "hvac_fan", []string{"online", "on_off", "hvac_air_flow_power"}
			m.AllowedValues = map[string]AllowedValue{"hvac_air_flow_power": {Type: Enum, EnumValues: &EnumValues{Values: []string{"low", "high", "low"}}}}
		}},
		{"enum not subset", func(m *Model) {
			m.Category, m.Features = "hvac_fan", []string{"online", "on_off", "hvac_air_flow_power"}
			m.AllowedValues = map[string]AllowedValue{"hvac_air_flow_power": {Type: Enum, EnumValues: &EnumValues{Values: []string{"warp"}}}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := good
			m.Features = append([]string{}, good.Features...)
			tc.edit(&m)
			if d := c.CheckModel(&m); len(d) == 0 {
				t.Error("accepted")
			}
		})
	}
}

// Reference §4 and §9 #1: the list is read under either name, whichever
// holds it (an empty "value" beside a filled "values" included), and
// always emitted as "value".
func TestDependencyAcceptsValuesEmitsValue(t *testing.T) {
	for _, in := range []string{
		`{"key":"light_mode","values":[{"type":"ENUM","enum_value":"colour"}]}`,
		`{"key":"light_mode","value":[{"type":"ENUM","enum_value":"colour"}]}`,
		`{"key":"light_mode","value":[],"values":[{"type":"ENUM","enum_value":"colour"}]}`,
		`{"key":"light_mode","value":null,"values":[{"type":"ENUM","enum_value":"colour"}]}`,
		`{"key":"light_mode","value":[{"type":"ENUM","enum_value":"colour"}],"values":[]}`,
	} {
		var d Dependency
		if err := json.Unmarshal([]byte(in), &d); err != nil {
			t.Fatal(err)
		}
		if len(d.Value) != 1 || d.Value[0].Enum == nil || *d.Value[0].Enum != "colour" {
			t.Errorf("%s: list not read: %+v", in, d)
			continue
		}
		b, _ := json.Marshal(d)
		if string(b) != `{"key":"light_mode","value":[{"type":"ENUM","enum_value":"colour"}]}` {
			t.Errorf("%s: emitted %s", in, b)
		}
	}
}

// Reference §4: a numeric allowed_values range has both bounds. A bound
// left out (or null) is refused, not read as 0, which would narrow the
// feature to start at 0 or to 0..0 and be served to agents so; both given
// as numbers or numeric strings are read.
func TestCheckModelRangeBounds(t *testing.T) {
	c := seed(t)
	for _, tc := range []struct {
		name, category, feature, allowed string
		want                             string // "" when the model is accepted
	}{
		{"integer whole", "socket", "power", `{"type":"INTEGER","integer_values":{"min":"10","max":"45000","step":"1"}}`, ""},
		{"integer as numbers", "socket", "power", `{"type":"INTEGER","integer_values":{"min":10,"max":45000}}`, ""},
		{"integer without min", "socket", "power", `{"type":"INTEGER","integer_values":{"max":"45000","step":"1"}}`, "power: integer_values needs min and max, it has no min"},
		{"integer without max", "socket", "power", `{"type":"INTEGER","integer_values":{"min":"10"}}`, "power: integer_values needs min and max, it has no max"},
		{"integer null max", "socket", "power", `{"type":"INTEGER","integer_values":{"min":"10","max":null}}`, "power: integer_values needs min and max, it has no max"},
		{"integer empty", "socket", "power", `{"type":"INTEGER","integer_values":{}}`, "power: integer_values needs min and max, it has no min and max"},
		{"float whole", "hvac_humidifier", "hvac_water_level", `{"type":"FLOAT","float_values":{"min":0,"max":"20.5"}}`, ""},
		{"float without max", "hvac_humidifier", "hvac_water_level", `{"type":"FLOAT","float_values":{"min":1}}`, "hvac_water_level: float_values needs min and max, it has no max"},
		{"float empty", "hvac_humidifier", "hvac_water_level", `{"type":"FLOAT","float_values":{}}`, "hvac_water_level: float_values needs min and max, it has no min and max"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"id":"m1","manufacturer":"X","model":"Y","category":"` + tc.category + `","features":["online","on_off","` +
				tc.feature + `"],"allowed_values":{"` + tc.feature + `":` + tc.allowed + `}}`
			var m Model
			if err := json.Unmarshal([]byte(body), &m); err != nil {
				t.Fatal(err)
			}
			d := c.CheckModel(&m)
			switch {
			case tc.want == "" && len(d) > 0:
				t.Errorf("refused: %v", d)
			case tc.want != "" && !slices.Equal(d, []string{tc.want}):
				t.Errorf("findings %q, want %q", d, tc.want)
			}
		})
	}
}

func FuzzValidate(f *testing.F) {
	c := seed(f)
	files, _ := filepath.Glob("testdata/validate/*.json")
	for _, p := range files {
		b, _ := os.ReadFile(p)
		var tc struct {
			Message json.RawMessage `json:"message"`
		}
		_ = json.Unmarshal(b, &tc)
		f.Add([]byte(tc.Message), "")
	}
	f.Add([]byte(`{"devices":{"x":{"states":[{"key":"light_colour","value":{"type":"COLOUR","colour_value":{"h":1}}}]}}}`), "light")
	f.Add([]byte(`{"devices":{"x":{"states":[{"key":"temperature","value":{"type":"INTEGER","integer_value":"22.5"}},{"key":"online","value":"on"}]}}}`), "")
	f.Fuzz(func(t *testing.T, msg []byte, cat string) {
		rep, err := c.Validate(msg, cat)
		if err == nil && rep == nil {
			t.Fatal("nil report without error")
		}
	})
}

// A profile's catalog (Without) lacks the hidden categories everywhere:
// validation by query or by a device's model, and a model's admission; the
// full catalog is left as it was.
func TestCatalogWithout(t *testing.T) {
	full := seed(t)
	c := full.Without([]string{"sensor_air"})
	if c.Categories["sensor_air"] != nil || full.Categories["sensor_air"] == nil || len(c.Categories) != 28 {
		t.Fatalf("%d categories", len(c.Categories))
	}
	if c.Features["co2"] != nil || c.Features["temperature"] == nil {
		t.Error("a feature only sensor_air has is still known, or a shared one was dropped")
	}
	var unknown *UnknownCategoryError
	if _, err := c.Validate([]byte(`{"devices":{}}`), "sensor_air"); !errors.As(err, &unknown) {
		t.Errorf("?category=sensor_air: %v", err)
	}
	config := `{"devices":[{"id":"a","name":"A","default_name":"A","model":{"id":"m","manufacturer":"M","model":"X","category":"sensor_air","features":["online","co2"]}}]}`
	rep, err := c.Validate([]byte(config), "")
	if err != nil || rep.Valid || !reflect.DeepEqual(rep.Devices[0].Errors, []string{"category 'sensor_air' is not supported"}) {
		t.Errorf("config of a sensor_air device: %+v, %v", rep, err)
	}
	if rep, err := full.Validate([]byte(config), ""); err != nil || !rep.Valid {
		t.Errorf("the full catalog changed: %+v, %v", rep, err)
	}
	m := Model{ID: "m", Manufacturer: "M", Model: "X", Category: "sensor_air", Features: []string{"online", "co2"}}
	if d := c.CheckModel(&m); len(d) == 0 {
		t.Error("a sensor_air model was admitted")
	}
}

// sameJSON fails the test unless got and want are the same JSON value
// (key order and spacing aside); what names the value in the message.
func sameJSON(t *testing.T, what string, got, want []byte) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s does not parse: %v\n%s", what, err, got)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s\n got %s\nwant %s", what, got, want)
	}
}

// eachGolden runs check as a subtest for every file matching pattern, each
// file's JSON decoded into a T, and fails when fewer than least files match
// (a mistyped pattern must not pass by running nothing).
func eachGolden[T any](t *testing.T, pattern string, least int, check func(t *testing.T, tc T)) {
	t.Helper()
	files, _ := filepath.Glob(pattern)
	if len(files) < least {
		t.Fatalf("only %d cases match %s", len(files), pattern)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var tc T
			if err := json.Unmarshal(b, &tc); err != nil {
				t.Fatal(err)
			}
			check(t, tc)
		})
	}
}
