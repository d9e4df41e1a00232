package homeapi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"os"
	"reflect"
	"slices"
	"sort"
	"testing"

	"partnerapi/internal/smarthome"
	"partnerapi/internal/testenv"
)

// The catalog an agent reads over HTTP, from a store the server seeded, is
// the reference's machine-readable catalog (smarthome-catalog.json) by the
// derivation rule of reference §1: the categories in ASCII order, and for
// each, byte for byte, {name, data_type, required} of its features in
// stored order, required being membership of the category's required set.
// The domain's copy of the catalog is checked fact by fact elsewhere
// (TestCatalogMatchesReference); this holds the whole way to the wire,
// through the store.
func TestServedCatalogIsTheReferences(t *testing.T) {
	raw, err := os.ReadFile(testenv.Reference(t, "smarthome-catalog.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Features map[string]struct {
			DataType string `json:"data_type"`
		} `json:"features"`
		Categories map[string]struct {
			Features []string `json:"features"`
			Required []string `json:"required"`
		} `json:"categories"`
	}
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Categories) != 29 || len(ref.Features) != 96 {
		t.Fatalf("the reference has %d categories and %d features, §6 says 29 and 96", len(ref.Categories), len(ref.Features))
	}
	ctx := context.Background()
	svc := newTestService(t)
	pw, err := svc.CreateCredential(ctx, smarthome.KindAgent, "agent-1")
	if err != nil {
		t.Fatal(err)
	}
	srv := newTestServer(t, svc)
	get := func(path string) []byte {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("agent-1:"+pw)))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, b)
		}
		return b
	}
	encode := func(v any) string {
		b, _ := json.Marshal(v)
		return string(b) + "\n"
	}

	var names []string
	for n := range ref.Categories {
		names = append(names, n)
	}
	sort.Strings(names)
	if got, want := string(get("/v1/mqtt-gate/categories")), encode(map[string][]string{"categories": names}); got != want {
		t.Errorf("categories\n got %s\nwant %s", got, want)
	}
	type ref1 struct {
		Name     string `json:"name"`
		DataType string `json:"data_type"`
		Required bool   `json:"required"`
	}
	served := map[string]bool{}
	for _, c := range names {
		var want []ref1
		for _, f := range ref.Categories[c].Features {
			want = append(want, ref1{f, ref.Features[f].DataType, slices.Contains(ref.Categories[c].Required, f)})
			served[f] = true
		}
		if got, want := string(get("/v1/mqtt-gate/categories/"+c+"/features")), encode(map[string][]ref1{"features": want}); got != want {
			t.Errorf("%s features\n got %s\nwant %s", c, got, want)
		}
	}
	if len(served) != 96 {
		t.Errorf("the categories serve %d features, want all 96", len(served))
	}
}

// GET /v1/mqtt-gate/models, from a store the server seeded, serves the
// reference's sample models (smarthome-catalog.json sample_models) field
// for field as the reference gives them, absent fields absent; the provider's
// placeholder lamp QWERTY124 as QWERTY123, the id reference §5 gives the
// mqtt-gate sample's lamp, since QWERTY124 is its fan too; none of the
// tolerance examples marked "conforming": false (§8.6: never produce them);
// and, for each category without a sample model, the placeholder
// QWERTY124-<category> of §5 with the category's features, dependencies
// and example allowed_values. TestCatalogMatchesReference holds the
// domain's copy to the same facts; this holds the wire, store included.
func TestServedModelsAreTheReferences(t *testing.T) {
	raw, err := os.ReadFile(testenv.Reference(t, "smarthome-catalog.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Categories map[string]struct {
			Features       []string        `json:"features"`
			Dependencies   json.RawMessage `json:"dependencies"`
			ExampleAllowed json.RawMessage `json:"example_allowed_values"`
		} `json:"categories"`
		SampleModels []map[string]json.RawMessage `json:"sample_models"`
	}
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	svc := newTestService(t)
	pw, err := svc.CreateCredential(ctx, smarthome.KindAgent, "agent-1")
	if err != nil {
		t.Fatal(err)
	}
	srv := newTestServer(t, svc)
	req, _ := http.NewRequest("GET", srv.URL+"/v1/mqtt-gate/models", nil)
	req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("agent-1:"+pw)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got struct {
		Models []map[string]json.RawMessage `json:"models"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != 200 {
		t.Fatalf("models: %d %v", resp.StatusCode, err)
	}
	served := map[string]map[string]json.RawMessage{}
	for _, m := range got.Models {
		var id string
		_ = json.Unmarshal(m["id"], &id)
		served[id] = m
	}
	same := func(what string, got, want json.RawMessage) {
		t.Helper()
		var g, w any
		_ = json.Unmarshal(got, &g)
		_ = json.Unmarshal(want, &w)
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s is %s, reference %s", what, got, want)
		}
	}
	sampled := map[string]bool{}
	for _, rm := range ref.SampleModels {
		var id, category string
		_ = json.Unmarshal(rm["id"], &id)
		_ = json.Unmarshal(rm["category"], &category)
		if string(rm["conforming"]) == "false" {
			if served[id] != nil {
				t.Errorf("sample model %q, a tolerance example, is served", id)
			}
			continue
		}
		sampled[category] = true
		if id == "QWERTY124" && category == "light" {
			// The catalog's transcription of the lamp lacks what §1's
			// models sample shows of it.
			id = "QWERTY123"
			rm = maps.Clone(rm)
			rm["hw_version"], rm["sw_version"], rm["description"] = json.RawMessage(`"3.1"`), json.RawMessage(`"5.6"`), json.RawMessage(`"Xiaqara smart lamp"`)
		}
		m := served[id]
		if m == nil {
			t.Errorf("sample model %s (%s) is not served", id, category)
			continue
		}
		for field := range m {
			if _, ok := rm[field]; !ok {
				t.Errorf("model %s: %s is served, the reference has none", id, field)
			}
		}
		for field, want := range rm {
			if field != "source" && field != "id" {
				same("model "+id+": "+field, m[field], want)
			}
		}
	}
	for name, cat := range ref.Categories {
		if sampled[name] {
			continue
		}
		m := served["QWERTY124-"+name]
		if m == nil {
			t.Errorf("category %s has neither a sample model nor its placeholder", name)
			continue
		}
		features, _ := json.Marshal(cat.Features)
		same("placeholder of "+name+": category", m["category"], json.RawMessage(`"`+name+`"`))
		same("placeholder of "+name+": features", m["features"], features)
		same("placeholder of "+name+": dependencies", m["dependencies"], cat.Dependencies)
		same("placeholder of "+name+": allowed_values", m["allowed_values"], cat.ExampleAllowed)
	}
	if want := len(ref.Categories) + 1; len(got.Models) != want {
		// One model per category, and the sample lamp beside the
		// third-party one.
		t.Errorf("%d models served, want %d", len(got.Models), want)
	}
}
