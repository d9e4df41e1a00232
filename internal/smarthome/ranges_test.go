package smarthome

import (
	"strings"
	"testing"
)

// A range that cannot replace its feature's is refused with the feature's
// name, so that a typo in --smarthome-ranges stops serve.
func TestCheckRanges(t *testing.T) {
	c := seed(t)
	for _, tc := range []struct {
		name, json, err string
	}{
		{"widened current", `{"current": {"min": 0, "max": 50000}}`, ""},
		{"float feature", `{"hcho_float": {"min": 0, "max": 2.5}}`, ""},
		{"step", `{"open_percentage": {"min": 0, "max": 100, "step": 1}}`, ""},
		{"unknown feature", `{"currant": {"min": 0, "max": 1}}`, "'currant' is not in the catalog"},
		{"not numeric", `{"on_off": {"min": 0, "max": 1}}`, "'on_off' is BOOL"},
		{"reversed", `{"voltage": {"min": 10, "max": 1}}`, "min <= max"},
		{"negative step", `{"voltage": {"min": 0, "max": 1, "step": -1}}`, "negative step"},
		{"fraction of an integer", `{"voltage": {"min": 0, "max": 250.5}}`, "must be whole"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParseRanges([]byte(tc.json))
			if err != nil {
				t.Fatal(err)
			}
			err = c.CheckRanges(r)
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("CheckRanges: %v, want %q", err, tc.err)
			}
		})
	}
	if _, err := ParseRanges([]byte(`{"current": {"min": 0, "maximum": 5}}`)); err == nil {
		t.Error("a member ranges do not have was read")
	}
	// "MAX" is not a second spelling of "max" (encoding/json takes it for
	// one, the last of both winning).
	if _, err := ParseRanges([]byte(`{"current": {"min": 0, "max": 5, "MAX": 50}}`)); err == nil || !strings.Contains(err.Error(), `"MAX"`) {
		t.Errorf("a bound named in another case: %v, want it refused by name", err)
	}
}

// WithRanges judges values by the replaced range, in validation as in a
// model's allowed_values, and leaves the catalog it was given alone.
func TestWithRanges(t *testing.T) {
	c := seed(t)
	w := c.WithRanges(Ranges{"current": {Min: 0, Max: 50000}})
	if c.Features["current"].Range.Max != 30000 || w.Features["current"].Range.Max != 50000 || w.Features["power"] != c.Features["power"] {
		t.Fatalf("current %+v in the original, %+v with ranges", c.Features["current"].Range, w.Features["current"].Range)
	}
	status := []byte(`{"devices":{"r1":{"states":[{"key":"current","value":{"type":"INTEGER","integer_value":"40000"}}]}}}`)
	for _, tc := range []struct {
		cat   *Catalog
		valid bool
	}{{c, false}, {w, true}} {
		rep, err := tc.cat.Validate(status, "relay")
		if err != nil {
			t.Fatal(err)
		}
		if rep.Valid != tc.valid {
			t.Errorf("current 40000 valid %v, want %v: %+v", rep.Valid, tc.valid, rep.Devices)
		}
	}
	m := Model{ID: "r", Manufacturer: "A", Model: "B", Category: "relay", Features: []string{"online", "on_off", "current"},
		AllowedValues: map[string]AllowedValue{"current": {Type: Integer, IntegerValues: &IntegerValues{Min: 0, Max: 45000}}}}
	if rep := w.checkModel(&m); len(rep.Warnings) != 0 {
		t.Errorf("allowed_values within the replaced range warned: %+v", rep.Warnings)
	}
	if rep := c.checkModel(&m); len(rep.Warnings) == 0 {
		t.Error("allowed_values wider than the default did not warn")
	}
}
