package homeapi

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzAdminBodies sends arbitrary bodies to the two administration
// operations that read one, creating an agent and putting a model. What
// either acts on (201, or 200 for a model replaced) is one JSON value and
// nothing after it: a body with a second object, or a stray closing
// brace, is malformed, not the first object with the rest ignored.
func FuzzAdminBodies(f *testing.F) {
	f.Add([]byte(`{"login":"agent-1"}`), false)
	f.Add([]byte(`{"login":"agent-2"} `), false)
	f.Add([]byte(`{"id":"lamp-x","category":"light","features":["on_off"]}`), true)
	f.Add([]byte(`{"id":"lamp-y","category":"light","features":["on_off","light_brightness"]}}`), true)
	h := &handlers{svc: newTestService(f)}
	f.Fuzz(func(t *testing.T, body []byte, model bool) {
		w := httptest.NewRecorder()
		if model {
			r := httptest.NewRequest("PUT", "/v1/admin/models/x", strings.NewReader(string(body)))
			var probe struct {
				ID string `json:"id"`
			}
			_ = json.Unmarshal(body, &probe)
			r.SetPathValue("id", probe.ID)
			h.putModel(w, r)
		} else {
			h.createAgent(w, httptest.NewRequest("POST", "/v1/admin/agents", strings.NewReader(string(body))))
		}
		if (w.Code == 200 || w.Code == 201) && !json.Valid(body) {
			t.Fatalf("%d for %q, which is not one JSON value: %s", w.Code, body, w.Body)
		}
	})
}

// TestAdminBodyTrailingData: an administration body with anything after
// its object is 400 and nothing is created (found by FuzzAdminBodies).
func TestAdminBodyTrailingData(t *testing.T) {
	h := &handlers{svc: newTestService(t)}
	const model = `{"id":"acme-hub","manufacturer":"Acme","model":"H1","category":"hub","features":["online"]}`
	for _, c := range []struct {
		name, body string
		put        bool
		status     int
	}{
		{"agent then another", `{"login":"agent-a"}{"login":"agent-b"}`, false, 400},
		{"agent and a brace", `{"login":"agent-c"}}`, false, 400},
		{"agent and white space", "{\"login\":\"agent-d\"}\n", false, 201},
		{"model and a brace", model + `}`, true, 400},
		{"model and an array", model + `[]`, true, 400},
		{"model", model, true, 201},
	} {
		w := httptest.NewRecorder()
		if c.put {
			r := httptest.NewRequest("PUT", "/v1/admin/models/acme-hub", strings.NewReader(c.body))
			r.SetPathValue("id", "acme-hub")
			h.putModel(w, r)
		} else {
			h.createAgent(w, httptest.NewRequest("POST", "/v1/admin/agents", strings.NewReader(c.body)))
		}
		if w.Code != c.status {
			t.Errorf("%s: %d %s, want %d", c.name, w.Code, w.Body, c.status)
		}
	}
}
