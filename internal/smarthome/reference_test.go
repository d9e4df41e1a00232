package smarthome

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"testing"

	"partnerapi/internal/testenv"
)

// The built-in catalog is the reference's machine-readable one
// (../shared/reference/smarthome-catalog.json, reference §6), fact by
// fact: the same 29 categories and 96 features; each feature's data type,
// access, enum values, default range with its step and colour ranges;
// each category's features in their stored order, its unconditionally
// required features, its one-of groups, its dependencies and its example
// allowed_values; and each feature used by exactly the categories the
// reference's used_in names. The catalog is a copy made once, so every
// fact an agent reads through /categories and /features, and that
// validation and commands check values against, would otherwise drift
// from the reference unnoticed.
func TestCatalogMatchesReference(t *testing.T) {
	raw, err := os.ReadFile(testenv.Reference(t, "smarthome-catalog.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Features     map[string]map[string]json.RawMessage `json:"features"`
		Categories   map[string]map[string]json.RawMessage `json:"categories"`
		SampleModels []map[string]json.RawMessage          `json:"sample_models"`
	}
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	c := seed(t)
	if got, want := sortedKeys(c.Features), sortedKeys(ref.Features); !slices.Equal(got, want) {
		t.Fatalf("features %v, reference %v", got, want)
	}
	if got, want := c.CategoryNames(), sortedKeys(ref.Categories); !slices.Equal(got, want) {
		t.Fatalf("categories %v, reference %v", got, want)
	}
	usedIn := map[string][]string{}
	for _, name := range c.CategoryNames() {
		for _, f := range c.Categories[name].Features {
			usedIn[f] = append(usedIn[f], name)
		}
	}
	for name, rf := range ref.Features {
		ours := asFields(t, c.Features[name])
		for _, field := range []string{"data_type", "access", "enum", "range", "colour"} {
			sameField(t, "feature "+name, field, ours[field], rf[field])
		}
		var want []string
		if err := json.Unmarshal(rf["used_in"], &want); err != nil {
			t.Fatalf("feature %s: used_in: %v", name, err)
		}
		if !slices.Equal(usedIn[name], want) {
			t.Errorf("feature %s is used by %v, reference %v", name, usedIn[name], want)
		}
	}
	for name, rc := range ref.Categories {
		ours := asFields(t, c.Categories[name])
		for _, field := range []string{"features", "required", "required_one_of", "dependencies", "example_allowed_values"} {
			sameField(t, "category "+name, field, ours[field], rc[field])
		}
	}

	// The sample models are served as the reference gives them, every
	// field; those it marks "conforming": false (non-platform features,
	// null versions) are tolerance examples for input, never served
	// (§8.6). The provider's placeholder id QWERTY124 is on its fan and its
	// lamp alike; the lamp is served as QWERTY123, the id §5 gives the
	// mqtt-gate sample's lamp, since one id names one model.
	models := map[string]*Model{}
	for i := range c.Models {
		models[c.Models[i].ID] = &c.Models[i]
	}
	for _, rm := range ref.SampleModels {
		var id, category string
		_ = json.Unmarshal(rm["id"], &id)
		_ = json.Unmarshal(rm["category"], &category)
		if string(rm["conforming"]) == "false" {
			if models[id] != nil {
				t.Errorf("sample model %q, a tolerance example, is served", id)
			}
			continue
		}
		if id == "QWERTY124" && category == "light" {
			id = "QWERTY123"
		}
		m := models[id]
		if m == nil {
			t.Errorf("sample model %s (%s) is not served", id, category)
			continue
		}
		ours := asFields(t, m)
		for field, want := range rm {
			if field != "source" && field != "id" {
				sameField(t, "model "+id, field, ours[field], want)
			}
		}
	}
	// Each category's placeholder model carries its features, dependencies
	// and example allowed_values (§5).
	for _, name := range c.CategoryNames() {
		cat := asFields(t, c.Categories[name])
		m, ok := models["QWERTY124-"+name]
		if !ok {
			continue // the category has a sample model instead
		}
		ours := asFields(t, m)
		sameField(t, "placeholder of "+name, "features", ours["features"], cat["features"])
		sameField(t, "placeholder of "+name, "dependencies", ours["dependencies"], cat["dependencies"])
		sameField(t, "placeholder of "+name, "allowed_values", ours["allowed_values"], cat["example_allowed_values"])
	}
}

// asFields is v's JSON encoding as its fields' raw values.
func asFields(t *testing.T, v any) map[string]json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]json.RawMessage
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// sameField compares one field as JSON values (absent is null), so that
// key order and number spelling (1 and 1.0) do not count.
func sameField(t *testing.T, what, field string, got, want json.RawMessage) {
	t.Helper()
	var g, w any
	if len(got) > 0 {
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatal(err)
		}
	}
	if len(want) > 0 {
		if err := json.Unmarshal(want, &w); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s: %s is %s, reference %s", what, field, got, want)
	}
}
