package homeapi

import (
	"strings"
	"testing"
)

// A colour_value is {"h": 0..360, "s": 0..1000, "v": 100..1000} (reference
// §4): all three components, numbers. One left out or null is a value that
// cannot be read (type_mismatch naming what it lacks), in an agent's
// status as in a model's dependency on light_colour, where it was read as
// 0: {"h":10,"v":100} passed as a colour the agent never sent, and a
// missing v was reported as v=0 out of range. Members beyond the three
// stay ignored, as on every value object.
func TestColourValueNeedsHSAndV(t *testing.T) {
	svc := newTestService(t)
	adminPW, agentPW := rootAndDev(t, svc)
	srv := newTestServer(t, svc)
	do := func(method, path, login, pw, body string) (int, string) {
		t.Helper()
		return basicDo(t, srv.URL, method, path, login, pw, body)
	}
	for _, tc := range []struct {
		name, colour string
		// lacks is what the finding says is missing; empty for a sound
		// colour.
		lacks string
	}{
		{"all three", `{"h":10,"s":500,"v":100}`, ""},
		{"a member beyond the three", `{"h":10,"s":500,"v":100,"a":1}`, ""},
		{"no h", `{"s":500,"v":100}`, "it has no h"},
		{"no s", `{"h":10,"v":100}`, "it has no s"},
		{"no v", `{"h":10,"s":500}`, "it has no v"},
		{"s null", `{"h":10,"s":null,"v":100}`, "it has no s"},
		{"empty", `{}`, "it has no h, s, v"},
	} {
		value := `{"type":"COLOUR","colour_value":` + tc.colour + `}`
		status := `{"devices":{"d1":{"states":[{"key":"light_colour","value":` + value + `}]}}}`
		code, body := do("POST", "/v1/mqtt-gate/validate?category=light", "dev", agentPW, status)
		if code != 200 || strings.Contains(body, `"valid":true`) != (tc.lacks == "") ||
			(tc.lacks != "" && (!strings.Contains(body, `"reason":"type_mismatch"`) || !strings.Contains(body, tc.lacks))) {
			t.Errorf("%s: status: %d %s, want a finding saying %q", tc.name, code, body, tc.lacks)
		}

		// light_mode available only while light_colour holds the colour:
		// a dependency no catalog shows, but one a model may declare.
		model := `{"manufacturer":"M","model":"X","category":"light","features":["online","on_off","light_mode","light_colour"],` +
			`"dependencies":{"light_mode":{"key":"light_colour","value":[` + value + `]}}}`
		code, body = do("PUT", "/v1/admin/models/colour", "root", adminPW, model)
		if tc.lacks == "" && code != 201 || tc.lacks != "" && (code != 400 || !strings.Contains(body, tc.lacks)) {
			t.Errorf("%s: PUT model: %d %s, want %s", tc.name, code, body, map[bool]string{true: "201", false: "400 saying " + tc.lacks}[tc.lacks == ""])
		}
		_, _ = do("DELETE", "/v1/admin/models/colour", "root", adminPW, "")
	}
}
