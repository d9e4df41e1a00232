package homeapi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sort"
	"testing"

	"partnerapi/internal/smarthome"
	"partnerapi/internal/testenv"
	"partnerapi/internal/web"
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
	api := web.API{Name: "smarthome", Handler: NewServer(Deps{Service: svc, Log: slog.New(slog.DiscardHandler)}), Errors: ErrorWriter()}
	srv := httptest.NewServer(api.Build(slog.New(slog.DiscardHandler), nil))
	t.Cleanup(srv.Close)
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
