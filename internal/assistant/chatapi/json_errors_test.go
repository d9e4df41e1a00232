package chatapi

import (
	"strings"
	"testing"

	"partnerapi/internal/assistant"
)

// TestWrongJSONTypesInAPITerms: a body whose member has the wrong JSON
// type is the 400 of a bad request format (reference §4) in the API's
// terms, the member and the JSON types, never in Go's (before, the message
// was encoding/json's "cannot unmarshal array into Go value of type
// chatapi.wireTokensCount", which named our types, not the client's
// mistake).
func TestWrongJSONTypesInAPITerms(t *testing.T) {
	f := newFixtureWith(t, toolEngine{})
	tok := f.token(f.client(assistant.ScopeCorp), "ASSISTANT_API_CORP")
	tests := []struct {
		name, path, body, want string
	}{
		{"chat body an array", "/api/v1/chat/completions", `[]`, "invalid JSON body: the body: expected an object, got an array"},
		{"chat body a string", "/api/v1/chat/completions", `"hi"`, "invalid JSON body: the body: expected an object, got a string"},
		{"temperature a string", "/api/v1/chat/completions", `{"model":"plain","temperature":"0.5"}`, "invalid JSON body: temperature: expected a number, got a string"},
		{"temperature out of range", "/api/v1/chat/completions", `{"model":"plain","temperature":1e400}`, "invalid JSON body: temperature: 1e400 is out of range"},
		{"n a fraction", "/api/v1/chat/completions", `{"model":"plain","n":1.5}`, "invalid JSON body: n: expected an integer, got 1.5"},
		// A whole number beyond int64 is no such error: max_tokens clamps it
		// and n refuses it by its range (TestChatParams).
		{"repetition_penalty out of range", "/api/v1/chat/completions", `{"model":"plain","repetition_penalty":1e999}`, "invalid JSON body: repetition_penalty: 1e999 is out of range"},
		{"stream a string", "/api/v1/chat/completions", `{"model":"plain","stream":"true"}`, "invalid JSON body: stream: expected a boolean, got a string"},
		{"messages an object", "/api/v1/chat/completions", `{"model":"plain","messages":{}}`, "invalid JSON body: messages: expected an array, got an object"},
		{"content a number", "/api/v1/chat/completions", `{"model":"plain","messages":[{"role":"user","content":1}]}`, "invalid JSON body: messages.content: expected a string, got a number"},
		{"role a boolean", "/api/v1/chat/completions", `{"model":"plain","messages":[{"role":true}]}`, "invalid JSON body: messages.role: expected a string, got a boolean"},
		{"count input a string", "/api/v1/tokens/count", `{"model":"plain","input":"text"}`, "invalid JSON body: input: expected an array, got a string"},
		{"count input of numbers", "/api/v1/tokens/count", `{"model":"plain","input":[1]}`, "invalid JSON body: input: expected a string, got a number"},
		{"count body an array", "/api/v1/tokens/count", `["text"]`, "invalid JSON body: the body: expected an object, got an array"},
		{"embeddings model a number", "/api/v1/embeddings", `{"model":1,"input":["a"]}`, "invalid JSON body: model: expected a string, got a number"},
		{"ai check input an array", "/api/v1/ai/check", `{"model":"plain","input":["a"]}`, "invalid JSON body: input: expected a string, got an array"},
		// A syntax error's own text names only the JSON met, and stays.
		{"syntax error", "/api/v1/chat/completions", `{"model":`, "invalid JSON body: unexpected EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := f.call("POST", tt.path, tok, tt.body)
			want := `{"status":400,"message":"` + tt.want + `"}`
			if resp.StatusCode != 400 || strings.TrimSpace(string(body)) != want {
				t.Fatalf("got %d %s, want 400 %s", resp.StatusCode, body, want)
			}
		})
	}
}
