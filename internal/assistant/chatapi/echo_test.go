package chatapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"partnerapi/internal/assistant"
)

// TestErrorEchoIsBounded sends a value of about a MiB (as much as the body
// takes), and one that is not valid UTF-8, in each place where an answer
// quotes what the client sent, and holds the answer to at most 4 KiB of
// valid JSON in the API's envelope: before, a message role, an attachment
// id, a number literal, a file's name or media type, or a function schema's
// property and type names were quoted whole, so one request made the server
// write back its own input, into every log that keeps answers.
func TestErrorEchoIsBounded(t *testing.T) {
	f := newFixtureWith(t, toolEngine{})
	tok := f.token(f.client(assistant.ScopeCorp), "ASSISTANT_API_CORP")
	long := strings.Repeat("x", 1<<20-1024)
	tests := []struct {
		name, path, body string
		status           int
		checks           bool // a 200 of /functions/validate, its findings quoting the value
	}{
		{"message role", "/api/v1/chat/completions", `{"model":"plain","messages":[{"role":"%s","content":"hi"}]}`, 422, false},
		{"attachment id", "/api/v1/chat/completions", `{"model":"plain","messages":[{"role":"user","content":"hi","attachments":["%s"]}]}`, 400, false},
		{"number literal", "/api/v1/chat/completions", `{"model":"plain","max_tokens":1%s}`, 400, false},
		{"schema property", "/api/v1/functions/validate", `{"name":"f","description":"d","parameters":{"type":"object","properties":{"%s":{}}}}`, 200, true},
		{"schema type", "/api/v1/functions/validate", `{"name":"f","description":"d","parameters":{"type":"object","properties":{"p":{"type":"%s","description":"d"}}}}`, 200, true},
		{"schema required", "/api/v1/functions/validate", `{"name":"f","description":"d","parameters":{"type":"object","properties":{},"required":["%s"]}}`, 200, true},
		{"few-shot param", "/api/v1/functions/validate", `{"name":"f","description":"d","parameters":{"type":"object","properties":{}},"few_shot_examples":[{"request":"r","params":{"%s":1}}]}`, 200, true},
	}
	for _, tc := range tests {
		for _, v := range []struct{ name, value string }{{"long", long}, {"invalid UTF-8", "ab\xff\xfecd"}} {
			t.Run(tc.name+"/"+v.name, func(t *testing.T) {
				value := v.value
				if tc.name == "number literal" {
					if v.name != "long" {
						t.Skip("a number has no bytes outside ASCII")
					}
					value = strings.Repeat("0", len(value))
				}
				status, checks := tc.status, tc.checks
				if v.name == "invalid UTF-8" {
					status, checks = 400, false // a body must be UTF-8 (RFC 8259 §8.1)
				}
				resp, body := f.call("POST", tc.path, tok, strings.Replace(tc.body, "%s", value, 1))
				checkBoundedAnswer(t, resp, body, status, checks)
			})
		}
	}

	// A file's name and media type are quoted when a text-only model is
	// given it as an attachment.
	for _, v := range []struct{ name, value string }{{"long", strings.Repeat("n", 256<<10)}, {"invalid UTF-8", "ab\xff\xfecd"}} {
		t.Run("attachment name and type/"+v.name, func(t *testing.T) {
			name := v.value
			if !utf8.ValidString(name) {
				name = "a.bin" // the upload takes only a UTF-8 name
			}
			id := uploadFile(t, f, tok, name, "image/x-"+v.value, []byte{0, 1, 2, 0xff})
			resp, body := f.call("POST", "/api/v1/chat/completions", tok,
				`{"model":"plain","messages":[{"role":"user","content":"hi","attachments":["`+id+`"]}]}`)
			checkBoundedAnswer(t, resp, body, 422, false)
		})
	}
}

// checkBoundedAnswer holds an answer to status, at most 4 KiB of valid
// UTF-8, and the API's envelope {status, message} (or, for checks, a JSON
// object).
func checkBoundedAnswer(t *testing.T, resp *http.Response, body []byte, status int, checks bool) {
	t.Helper()
	if resp.StatusCode != status || len(body) > 4<<10 || !utf8.Valid(body) {
		t.Fatalf("status %d, %d bytes (valid UTF-8 %v): %.300q", resp.StatusCode, len(body), utf8.Valid(body), body)
	}
	if checks {
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatalf("not JSON (%v): %q", err, body)
		}
		return
	}
	var e struct {
		Status  int    `json:"status"`
		Message string `json:"message"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil || e.Status != status || e.Message == "" {
		t.Fatalf("not the error envelope (%v): %q", err, body)
	}
}
