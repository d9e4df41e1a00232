package homeapi

import (
	"strings"
	"testing"
)

// An allowed_values entry is {"type": T, "<t>_values": ...} (reference §4):
// one range or one list, of the feature's type. An entry that carries
// another type's member beside its own (integer_values and enum_values,
// say) is refused wherever a model comes in, an administrator's PUT (400,
// so that GET /v1/mqtt-gate/models never serves agents an entry with two
// shapes and no rule for which applies) and an agent's inline model in
// POST /v1/mqtt-gate/validate (bad_allowed_values), while a member left
// null counts as absent.
func TestAllowedValuesCarryTheirTypesMemberAlone(t *testing.T) {
	svc := newTestService(t)
	adminPW, agentPW := rootAndDev(t, svc)
	srv := newTestServer(t, svc)
	do := func(method, path, login, pw, body string) (int, string) {
		t.Helper()
		return basicDo(t, srv.URL, method, path, login, pw, body)
	}
	const (
		integer = `"integer_values":{"min":"100","max":"900","step":"1"}`
		float   = `"float_values":{"min":0,"max":20}`
		enum    = `"enum_values":{"values":["white"]}`
	)
	for _, tc := range []struct {
		name, category, feature, entry string
		// foreign names the other type's member the entry carries; empty
		// for a sound entry.
		foreign string
	}{
		{"INTEGER alone", "light", "light_brightness", `{"type":"INTEGER",` + integer + `}`, ""},
		{"INTEGER with a null enum_values", "light", "light_brightness", `{"type":"INTEGER",` + integer + `,"enum_values":null}`, ""},
		{"INTEGER with enum_values", "light", "light_brightness", `{"type":"INTEGER",` + integer + `,` + enum + `}`, "enum_values"},
		{"INTEGER with float_values", "light", "light_brightness", `{"type":"INTEGER",` + integer + `,` + float + `}`, "float_values"},
		{"FLOAT alone", "hvac_humidifier", "hvac_water_level", `{"type":"FLOAT",` + float + `}`, ""},
		{"FLOAT with integer_values", "hvac_humidifier", "hvac_water_level", `{"type":"FLOAT",` + float + `,` + integer + `}`, "integer_values"},
		{"ENUM alone", "light", "light_mode", `{"type":"ENUM",` + enum + `}`, ""},
		{"ENUM with integer_values and float_values", "light", "light_mode", `{"type":"ENUM",` + enum + `,` + integer + `,` + float + `}`, "integer_values, float_values"},
	} {
		features := `["online","on_off","` + tc.feature + `"]`
		model := `{"manufacturer":"M","model":"X","category":"` + tc.category + `","features":` + features +
			`,"allowed_values":{"` + tc.feature + `":` + tc.entry + `}}`
		status, body := do("PUT", "/v1/admin/models/shape", "root", adminPW, model)
		want := "carries " + tc.foreign + " of another type"
		switch {
		case tc.foreign == "" && status != 201:
			t.Errorf("%s: PUT %d %s, want 201", tc.name, status, body)
		case tc.foreign != "" && (status != 400 || !strings.Contains(body, want)):
			t.Errorf("%s: PUT %d %s, want 400 saying %q", tc.name, status, body, want)
		}
		status, body = do("GET", "/v1/mqtt-gate/models?category="+tc.category, "dev", agentPW, "")
		if served := strings.Contains(body, `"id":"shape"`); status != 200 || served != (tc.foreign == "") {
			t.Errorf("%s: GET models %d, model served %v:\n%s", tc.name, status, served, body)
		}
		_, _ = do("DELETE", "/v1/admin/models/shape", "root", adminPW, "")

		config := `{"devices":[{"id":"d","name":"D","default_name":"D","model":` + strings.Replace(model, `{`, `{"id":"inline",`, 1) + `}]}`
		status, body = do("POST", "/v1/mqtt-gate/validate", "dev", agentPW, config)
		if wantValid := tc.foreign == ""; status != 200 || strings.Contains(body, `"valid":true`) != wantValid ||
			(!wantValid && !strings.Contains(body, `"reason":"bad_allowed_values"`)) {
			t.Errorf("%s: validate %d %s, want valid %v", tc.name, status, body, wantValid)
		}
	}
}
