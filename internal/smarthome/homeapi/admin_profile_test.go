package homeapi

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"partnerapi/internal/smarthome"
	"partnerapi/internal/smarthome/homesql"
	"partnerapi/internal/storetest"
)

// Under a profile (--smarthome-profile 2025-11, no sensor_air) a model of a
// hidden category stored earlier is not served to agents, but the admin
// API shows it as `smarthome model list` does: GET finds the model DELETE
// removes, rather than answering 404 for a model DELETE then deletes. A new
// model of the hidden category is still refused.
func TestAdminSeesStoredModelsOfHiddenCategories(t *testing.T) {
	ctx := context.Background()
	db := storetest.SQLite(t)
	if err := homesql.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	// Stored by a serve without the profile.
	all := smarthome.NewService(homesql.New(db))
	if err := all.Init(ctx); err != nil {
		t.Fatal(err)
	}
	air := smarthome.Model{ID: "air", Manufacturer: "M", Model: "X", Category: "sensor_air", Features: []string{"online", "co2"}}
	if _, _, err := all.PutModel(ctx, air); err != nil {
		t.Fatal(err)
	}
	svc := smarthome.NewService(homesql.New(db))
	svc.Restrict([]string{"sensor_air"})
	if err := svc.Init(ctx); err != nil {
		t.Fatal(err)
	}
	adminPW, agentPW := rootAndDev(t, svc)
	srv := newTestServer(t, svc)
	admin := func(method, path, body string) (int, string) {
		return basicDo(t, srv.URL, method, path, "root", adminPW, body)
	}
	if st, body := basicDo(t, srv.URL, "GET", "/v1/mqtt-gate/models", "dev", agentPW, ""); st != http.StatusOK || strings.Contains(body, `"air"`) {
		t.Errorf("agent's models: %d %s", st, body)
	}
	for _, tc := range []struct {
		method, path, body string
		status             int
		want               string
	}{
		{"GET", "/v1/admin/models", "", http.StatusOK, `"id":"air"`},
		{"GET", "/v1/admin/models/air", "", http.StatusOK, `"category":"sensor_air"`},
		{"PUT", "/v1/admin/models/air2", `{"manufacturer":"M","model":"X","category":"sensor_air","features":["online","co2"]}`,
			http.StatusBadRequest, "category 'sensor_air' is not supported"},
		{"DELETE", "/v1/admin/models/air", "", http.StatusNoContent, ""},
		{"GET", "/v1/admin/models/air", "", http.StatusNotFound, "model 'air' does not exist"},
	} {
		if st, body := admin(tc.method, tc.path, tc.body); st != tc.status || !strings.Contains(body, tc.want) {
			t.Errorf("%s %s: %d %s, want %d with %q", tc.method, tc.path, st, body, tc.status, tc.want)
		}
	}
}
