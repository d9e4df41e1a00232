package homeapi

import (
	"net/http"
	"strings"
	"testing"
)

// A model PUT through the admin API is refused for an unknown member inside
// the parts whose types read themselves too (a dependency, integer_values,
// float_values); the list's two names are taken, and a value object's extra
// members stay ignored.
func TestAdminModelUnknownNestedMembers(t *testing.T) {
	svc := newTestService(t)
	adminPW, _ := rootAndDev(t, svc)
	srv := newTestServer(t, svc)
	model := func(deps, allowed string) string {
		return `{"manufacturer":"Xiaqara","model":"SM1","category":"light",` +
			`"features":["online","on_off","light_mode","light_brightness","light_colour","light_colour_temp"],` +
			`"dependencies":{"light_colour":` + deps + `},"allowed_values":{"light_brightness":` + allowed + `}}`
	}
	const (
		dep     = `{"key":"light_mode","value":[{"type":"ENUM","enum_value":"colour"}]}`
		allowed = `{"type":"INTEGER","integer_values":{"min":"100","max":"900","step":"1"}}`
	)
	for _, tc := range []struct {
		name, body string
		status     int
		want       string
	}{
		{"known members", model(dep, allowed), http.StatusCreated, ""},
		{"the list as values", model(`{"key":"light_mode","values":[{"type":"ENUM","enum_value":"colour"}]}`, allowed), http.StatusOK, ""},
		{"unknown in integer_values", model(dep, `{"type":"INTEGER","integer_values":{"min":"100","max":"900","stepp":"2"}}`),
			http.StatusBadRequest, "stepp"},
		{"unknown in an allowed value", model(dep, `{"type":"INTEGER","integer_values":{"min":"100","max":"900"},"unit":"%"}`),
			http.StatusBadRequest, "unit"},
		{"unknown in a dependency", model(`{"key":"light_mode","value":[{"type":"ENUM","enum_value":"colour"}],"when":"always"}`, allowed),
			http.StatusBadRequest, "when"},
		// A name in another case is a member the model does not have, at
		// the top and inside the parts that read themselves: encoding/json
		// took "Manufacturer" for "manufacturer", the last of both winning.
		{"a top-level name in another case", strings.Replace(model(dep, allowed), `"manufacturer":"Xiaqara"`, `"manufacturer":"Xiaqara","Manufacturer":"Other"`, 1),
			http.StatusBadRequest, `unknown field \"Manufacturer\"`},
		{"a part's name in another case", strings.Replace(model(dep, allowed), `"allowed_values"`, `"Allowed_Values"`, 1),
			http.StatusBadRequest, `unknown field \"Allowed_Values\"`},
		{"a name in another case in integer_values", model(dep, `{"type":"INTEGER","integer_values":{"min":"100","MAX":"900"}}`),
			http.StatusBadRequest, `unknown field \"MAX\"`},
		{"a name in another case in a dependency", model(`{"Key":"light_mode","value":[{"type":"ENUM","enum_value":"colour"}]}`, allowed),
			http.StatusBadRequest, `unknown field \"Key\"`},
		// A value object keeps ignoring members beyond its own, as it does
		// everywhere (TestColourValueNeedsHSAndV).
		{"a member beyond a dependency value's own", model(`{"key":"light_mode","value":[{"type":"ENUM","enum_value":"colour","note":"x"}]}`, allowed),
			http.StatusOK, ""},
	} {
		st, body := basicDo(t, srv.URL, "PUT", "/v1/admin/models/sm1", "root", adminPW, tc.body)
		if st != tc.status || tc.want != "" && !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d %s, want %d with %q", tc.name, st, body, tc.status, tc.want)
		}
	}
}
