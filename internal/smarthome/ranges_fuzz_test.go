package smarthome

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzParseRanges holds the --smarthome-ranges reader to its format,
// {"<feature>": {"min": n, "max": n, "step": n}, ...} with step optional:
// a file it accepts is that one JSON object and nothing after it, and
// every range it reads has the min and max the file gives (none made up
// as 0), so that a file cut short, two files run together or a range
// missing a bound stops serve rather than narrowing a feature to [0, 0].
func FuzzParseRanges(f *testing.F) {
	for _, s := range []string{`{"current": {"min": 0, "max": 50000}}`, `{"hcho_float": {"min": 0, "max": 2.5}}`,
		`{"open_percentage": {"min": 0, "max": 100, "step": 1}}`, `{"voltage": {"min": 10, "max": 1}}`, `{}`, `null`,
		`{"current": {"min": 0, "max": 5}, "voltage": {"min": 1, "max": 2, "step": 0.5}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseRanges(b)
		if err != nil {
			return
		}
		if !json.Valid(b) {
			t.Fatalf("ParseRanges accepted %q, which is not one JSON value", b)
		}
		var doc map[string]map[string]json.RawMessage
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("ParseRanges accepted %q: %v", b, err)
		}
		for name, rg := range r {
			for _, bound := range []struct {
				key string
				v   float64
			}{{"min", rg.Min}, {"max", rg.Max}} {
				// Member names match in any letter case, as encoding/json
				// matches them: "MIN" is min.
				given := false
				for k, raw := range doc[name] {
					var v float64
					if strings.EqualFold(k, bound.key) && json.Unmarshal(raw, &v) == nil && v == bound.v {
						given = true
					}
				}
				if !given {
					t.Fatalf("ParseRanges(%q): %s %s is %v, which the file does not give", b, name, bound.key, bound.v)
				}
			}
		}
	})
}

// TestParseRangesRefuses: a ranges file with anything after its object,
// or a range without both bounds, stops serve; before, the rest of the
// file was ignored and a missing bound read as 0 (found by
// FuzzParseRanges).
func TestParseRangesRefuses(t *testing.T) {
	for _, tc := range []struct{ json, err string }{
		{`{"current": {"min": 0, "max": 5}} {"voltage": {"min": 0, "max": 1}}`, "data after the object"},
		{`{"current": {"min": 0, "max": 50000}}}`, "data after the object"},
		{`{"current": {"max": 50000}}`, "'current' needs both min and max"},
		{`{"current": {"min": 0}}`, "'current' needs both min and max"},
		{`{"current": {}}`, "'current' needs both min and max"},
		{`{"current": null}`, "'current' needs both min and max"},
	} {
		if _, err := ParseRanges([]byte(tc.json)); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("ParseRanges(%s) = %v, want %q", tc.json, err, tc.err)
		}
	}
	r, err := ParseRanges([]byte("{\"current\": {\"min\": -1, \"max\": 50000, \"step\": 1}}\n"))
	if err != nil || r["current"] != (Range{Min: -1, Max: 50000, Step: 1}) {
		t.Errorf("ParseRanges: %v, %v", r, err)
	}
}
