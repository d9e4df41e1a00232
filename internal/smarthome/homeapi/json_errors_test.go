package homeapi

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestWrongJSONTypesInAPITerms: a body whose member has the wrong JSON
// type is the 400 Common error (reference §3) with details in the API's
// terms, the member and the JSON types, never in Go's (before, they quoted
// encoding/json: "cannot unmarshal number into Go struct field
// configDevice.id of type string", which named our types, not the agent's
// mistake; the MQTT gate's down/errors carried the same text).
func TestWrongJSONTypesInAPITerms(t *testing.T) {
	h := &handlers{svc: newTestService(t), log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	tests := []struct {
		name    string
		handler http.HandlerFunc
		body    string
		details string
	}{
		{"validate body an array", h.validate, `[]`, `body is not a JSON object: the body: expected an object, got an array`},
		{"validate device id a number", h.validate, `{"devices":[{"id":5}]}`, `devices: id: expected a string, got a number`},
		{"validate inline model features a string", h.validate, `{"devices":[{"id":"d","model":{"id":"m","manufacturer":"x","model":"y","category":"light","features":"online"}}]}`, `devices: model.features: expected an array, got a string`},
		{"validate status states an object", h.validate, `{"devices":{"d":{"states":{}}}}`, `devices: states: expected an array, got an object`},
		{"model features a string", h.putModel, `{"manufacturer":"a","model":"b","category":"light","features":"online"}`, `body is not a model: features: expected an array, got a string`},
		{"model body an array", h.putModel, `[]`, `body is not a model: the body: expected an object, got an array`},
		{"agent login a number", h.createAgent, `{"login":5}`, `body must be {\"login\": \"...\"}: login: expected a string, got a number`},
		{"rename device_id a number", h.renameDevice, `{"device_id":1,"new_name":"x"}`, `device_id: expected a string, got a number`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			r := httptest.NewRequest("POST", "/", strings.NewReader(tt.body))
			r.Header.Set("Content-Type", "application/json")
			r.SetPathValue("id", "m1")
			r.SetPathValue("login", "agent-1")
			tt.handler(w, r)
			body := w.Body.String()
			if w.Code != 400 || !strings.Contains(body, tt.details+`"]`) || strings.Contains(body, "Go ") {
				t.Fatalf("got %d %s, want 400 with details ending %q", w.Code, body, tt.details)
			}
		})
	}
}
