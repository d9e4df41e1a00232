package homeapi

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestErrorEchoIsBounded sends a value of about a MiB (the most the body or
// the request's head lets through), and one that is not valid UTF-8, in each
// place where an error answer quotes what the client sent, and holds the
// answer to the Common error (reference §3) of at most 4 KiB in valid JSON:
// before, the 404 for an unknown category (path or ?category=) quoted the
// whole name, so one request made the server write back its own megabyte of
// input, into every log that keeps answers.
func TestErrorEchoIsBounded(t *testing.T) {
	svc := newTestService(t)
	adminPW, agentPW := rootAndDev(t, svc)
	srv := newTestServer(t, svc)
	// The request's head may be 1 MiB, its body 1 MiB: these leave room
	// for the rest of either.
	head := strings.Repeat("x", 900<<10)
	body := strings.Repeat("x", 1<<20-1024)
	q := url.QueryEscape
	tests := []struct {
		name, login, method, path, body string
		status                          int
	}{
		{"category in the path", "dev", "GET", "/v1/mqtt-gate/categories/%s/features", "", 404},
		{"category in the query", "dev", "GET", "/v1/mqtt-gate/models?category=%s", "", 404},
		{"category of validate", "dev", "POST", "/v1/mqtt-gate/validate?category=%s", `{"devices":{}}`, 404},
		{"unknown path", "dev", "GET", "/v1/mqtt-gate/%s", "", 404},
		{"model id", "root", "GET", "/v1/admin/models/%s", "", 404},
		{"agent login", "root", "DELETE", "/v1/admin/agents/%s", "", 404},
		{"unknown member of a model", "root", "PUT", "/v1/admin/models/m1", `{"%s":1}`, 400},
		{"category of a model", "root", "PUT", "/v1/admin/models/m1", `{"manufacturer":"a","model":"b","category":"%s","features":["on_off"]}`, 400},
		{"feature of a model", "root", "PUT", "/v1/admin/models/m1", `{"manufacturer":"a","model":"b","category":"light","features":["%s"]}`, 400},
		{"model_id of a config", "dev", "POST", "/v1/mqtt-gate/validate", `{"devices":[{"id":"d","model_id":"%s"}]}`, 200},
		{"feature of a status", "dev", "POST", "/v1/mqtt-gate/validate", `{"devices":{"d":{"states":[{"key":"%s","value":{"type":"BOOL","bool_value":true}}]}}}`, 200},
		{"feature of a status in a category", "dev", "POST", "/v1/mqtt-gate/validate?category=light", `{"devices":{"d":{"states":[{"key":"%s","value":{"type":"BOOL","bool_value":true}}]}}}`, 200},
		{"enum value of a status", "dev", "POST", "/v1/mqtt-gate/validate?category=light", `{"devices":{"d":{"states":[{"key":"light_mode","value":{"type":"ENUM","enum_value":"%s"}}]}}}`, 200},
		{"value of the wrong type", "dev", "POST", "/v1/mqtt-gate/validate?category=light", `{"devices":{"d":{"states":[{"key":"on_off","value":{"type":"%s","bool_value":true}}]}}}`, 200},
	}
	for _, tc := range tests {
		for _, v := range []struct{ name, value string }{{"long", ""}, {"invalid UTF-8", "ab\xff\xfecd"}} {
			t.Run(tc.name+"/"+v.name, func(t *testing.T) {
				value := v.value
				if value == "" {
					value = head
					if tc.body != "" && strings.Contains(tc.body, "%s") {
						value = body
					}
				}
				pw := agentPW
				if tc.login == "root" {
					pw = adminPW
				}
				path, reqBody := tc.path, tc.body
				if strings.Contains(reqBody, "%s") {
					reqBody = strings.Replace(reqBody, "%s", value, 1)
				} else {
					path = strings.Replace(path, "%s", q(value), 1)
				}
				status, answer := basicDo(t, srv.URL, tc.method, path, tc.login, pw, reqBody)
				want := tc.status
				if v.name == "invalid UTF-8" && strings.Contains(tc.body, "%s") {
					want = 400 // a body must be UTF-8 (RFC 8259 §8.1)
				}
				if status != want || len(answer) > 4<<10 || !utf8.ValidString(answer) {
					t.Fatalf("status %d, %d bytes (valid UTF-8 %v): %.300q", status, len(answer), utf8.ValidString(answer), answer)
				}
				if status == 200 {
					return
				}
				var e struct {
					Code    int       `json:"code"`
					Message string    `json:"message"`
					Details *[]string `json:"details"`
				}
				dec := json.NewDecoder(strings.NewReader(answer))
				dec.DisallowUnknownFields()
				if err := dec.Decode(&e); err != nil || e.Code != status || e.Message == "" || e.Details == nil {
					t.Fatalf("not the Common error (%v): %q", err, answer)
				}
			})
		}
	}
}
