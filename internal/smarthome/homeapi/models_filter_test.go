package homeapi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"partnerapi/internal/smarthome"
	"partnerapi/internal/smarthome/homesql"
	"partnerapi/internal/storetest"
	"partnerapi/internal/web"
)

// GET /v1/mqtt-gate/models?category= (the reference's room for filtering,
// §8.7) lists the models of the named categories in the catalog's order,
// one category or several (the parameter repeated or comma-separated); a
// category the profile does not serve is the reference's 404 for an
// unknown category, in the Common error, not an empty list; an empty name
// is 400; other unknown parameters stay ignored, and the filtered list
// keeps the catalog's ETag, so If-None-Match still answers 304.
func TestModelsCategoryFilter(t *testing.T) {
	ctx := context.Background()
	db := storetest.SQLite(t)
	if err := homesql.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	svc := smarthome.NewService(homesql.New(db))
	// The 2025-11 profile, which has no sensor_air (reference §6.1).
	svc.Restrict([]string{"sensor_air"})
	if err := svc.Init(ctx); err != nil {
		t.Fatal(err)
	}
	pw, err := svc.CreateCredential(ctx, smarthome.KindAgent, "agent-1")
	if err != nil {
		t.Fatal(err)
	}
	// A second light model, so that a category's list has more than one,
	// in id order.
	if _, _, err := svc.PutModel(ctx, smarthome.Model{ID: "A-LAMP", Manufacturer: "Acme", Model: "L1", Category: "light",
		Features: []string{"online", "on_off"}}); err != nil {
		t.Fatal(err)
	}
	c, err := svc.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	of := func(cats ...string) []string {
		var ids []string
		for _, m := range c.Models {
			if slices.Contains(cats, m.Category) {
				ids = append(ids, m.ID)
			}
		}
		return ids
	}
	var all []string
	for _, m := range c.Models {
		all = append(all, m.ID)
	}
	api := web.API{Name: "smarthome", Handler: NewServer(Deps{Service: svc, Log: slog.New(slog.DiscardHandler)}), Errors: ErrorWriter()}
	srv := httptest.NewServer(api.Build(slog.New(slog.DiscardHandler), nil))
	t.Cleanup(srv.Close)
	get := func(query, inm string) (int, []byte, http.Header) {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.URL+"/v1/mqtt-gate/models"+query, nil)
		req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("agent-1:"+pw)))
		if inm != "" {
			req.Header.Set("If-None-Match", inm)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b json.RawMessage
		_ = json.NewDecoder(resp.Body).Decode(&b)
		return resp.StatusCode, b, resp.Header
	}
	for _, tc := range []struct {
		name, query string
		status      int
		ids         []string
		err         string
	}{
		{"no filter", "", 200, all, ""},
		{"one category", "?category=light", 200, of("light"), ""},
		{"repeated", "?category=socket&category=light", 200, of("light", "socket"), ""},
		{"comma-separated", "?category=socket,light", 200, of("light", "socket"), ""},
		{"one name twice", "?category=light&category=light", 200, of("light"), ""},
		{"other parameters ignored", "?category=hub&page=2&foo", 200, of("hub"), ""},
		{"unknown parameters alone ignored", "?categories=light", 200, all, ""},
		{"unknown category", "?category=light&category=ligth", 404, nil, `{"code":404,"message":"Not found","details":["category 'ligth' is not supported"]}`},
		{"category outside the profile", "?category=sensor_air", 404, nil, `{"code":404,"message":"Not found","details":["category 'sensor_air' is not supported"]}`},
		{"empty", "?category=", 400, nil, `{"code":400,"message":"Bad request","details":["category must name a category: ?category=light, repeated or comma-separated for several"]}`},
		{"empty item", "?category=light,,socket", 400, nil, `"code":400`},
	} {
		status, body, _ := get(tc.query, "")
		if status != tc.status {
			t.Errorf("%s: %d %s, want %d", tc.name, status, body, tc.status)
			continue
		}
		if tc.err != "" {
			if !strings.Contains(string(body), tc.err) {
				t.Errorf("%s: %s, want %s", tc.name, body, tc.err)
			}
			continue
		}
		var got struct{ Models []smarthome.Model }
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, m := range got.Models {
			ids = append(ids, m.ID)
		}
		if !slices.Equal(ids, tc.ids) || len(ids) == 0 {
			t.Errorf("%s: models %v, want %v", tc.name, ids, tc.ids)
		}
	}
	_, _, hdr := get("?category=light", "")
	if status, _, _ := get("?category=light", hdr.Get("ETag")); status != http.StatusNotModified {
		t.Errorf("If-None-Match on the filtered list: %d, want 304", status)
	}
}
