package chatapi

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"partnerapi/internal/assistant"
)

// toolEngine is a text-only engine (as the local one is) that answers with
// a Qwen-style <tool_call> block in two pieces, and embeds text as its
// length and word count so vectors are checkable.
type toolEngine struct{}

func (toolEngine) Models(context.Context) ([]assistant.ModelInfo, error) {
	return []assistant.ModelInfo{
		{Name: "qwen", Version: "2.5", OwnedBy: "test", Type: "chat", ContextWindow: 1000, SupportsFunctions: true},
		{Name: "plain", Version: "1", OwnedBy: "test", Type: "chat", ContextWindow: 1000},
		{Name: "Embeddings", Version: "1", OwnedBy: "test", Type: "embedder", ContextWindow: 100},
	}, nil
}
func (toolEngine) CountTokens(_ context.Context, _ string, text string) (int, error) {
	return len(strings.Fields(text)), nil
}
func (toolEngine) Generate(_ context.Context, req assistant.GenerateRequest, emit func(assistant.Delta) error) (assistant.Result, error) {
	pieces := []string{"<tool_call>\n{\"name\": \"weather_forecast\", ", "\"arguments\": {\"location\": \"Манжерок\", \"num_days\": 10}}\n</tool_call>"}
	if last := req.Messages[len(req.Messages)-1]; last.Role == "function" {
		pieces = []string{"Sunny, ", last.Content}
	}
	for _, p := range pieces {
		if emit != nil {
			if err := emit(assistant.Delta{Text: p}); err != nil {
				return assistant.Result{}, err
			}
		}
	}
	return assistant.Result{Choices: []assistant.Choice{{Text: strings.Join(pieces, ""), FinishReason: "stop"}},
		Usage: assistant.Usage{PromptTokens: 40, CompletionTokens: 20}}, nil
}
func (toolEngine) Embed(_ context.Context, _ string, inputs []string) ([]assistant.Embedding, error) {
	out := make([]assistant.Embedding, len(inputs))
	for i, in := range inputs {
		n := len(strings.Fields(in))
		out[i] = assistant.Embedding{Vector: []float32{float32(len([]rune(in))), float32(n), 0.5}, PromptTokens: n}
	}
	return out, nil
}

const weatherFunctions = `"functions":[{"name":"weather_forecast","description":"Forecast","parameters":{"type":"object","properties":{"location":{"type":"string"},"num_days":{"type":"integer"}}}}]`

// normaliseStateID replaces functions_state_id values (fresh UUIDs) so a
// golden file can hold them.
func normaliseStateID(t *testing.T, body []byte) []byte {
	t.Helper()
	s := string(body)
	var out strings.Builder
	const key = `"functions_state_id":"`
	for {
		i := strings.Index(s, key)
		if i < 0 {
			out.WriteString(s)
			break
		}
		out.WriteString(s[:i+len(key)])
		s = s[i+len(key):]
		id := s[:strings.IndexByte(s, '"')]
		if !assistant.IsUUID(id) {
			t.Fatalf("functions_state_id %q is not a UUID", id)
		}
		out.WriteString("00000000-0000-0000-0000-000000000000")
		s = s[len(id):]
	}
	return []byte(out.String())
}

func TestFunctionCallGolden(t *testing.T) {
	f := newFixtureWith(t, toolEngine{})
	tok := f.token(f.client(assistant.ScopeCorp), "ASSISTANT_API_CORP")
	tests := []struct{ name, body string }{
		{"function_call.json", `{"model":"qwen","messages":[{"role":"user","content":"Погода в Манжероке на 10 дней?"}],` + weatherFunctions + `,"function_call":"auto"}`},
		{"function_call.sse", `{"model":"qwen","stream":true,"messages":[{"role":"user","content":"Погода?"}],` + weatherFunctions + `,"function_call":{"name":"weather_forecast","partial_arguments":{}}}`},
		// partial_arguments fixes num_days (the engine writes 10) and adds
		// units; location stays the model's.
		{"function_call_partial.json", `{"model":"qwen","messages":[{"role":"user","content":"Погода в Манжероке?"}],` + weatherFunctions + `,"function_call":{"name":"weather_forecast","partial_arguments":{"num_days":3,"units":"metric"}}}`},
		{"function_call_partial.sse", `{"model":"qwen","stream":true,"messages":[{"role":"user","content":"Погода?"}],` + weatherFunctions + `,"function_call":{"name":"weather_forecast","partial_arguments":{"units":"metric","num_days":3}}}`},
		// The reference's exact third request: the call and its result
		// passed back; the engine answers in text.
		{"function_result.json", `{"model":"qwen","messages":[{"role":"user","content":"x"},{"role":"assistant","content":"","function_call":{"name":"weather_forecast","arguments":{"location":"Oslo"}},"functions_state_id":"abc"},{"role":"function","name":"weather_forecast","content":"{\"r\":1}"}],` + weatherFunctions + `,"function_call":"auto","repetition_penalty":1,"update_interval":0,"profanity_check":false}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := f.call("POST", "/api/v1/chat/completions", tok, tt.body)
			if resp.StatusCode != 200 {
				t.Fatalf("%d %s", resp.StatusCode, body)
			}
			golden(t, tt.name, normaliseStateID(t, body))
		})
	}
}

func TestFunctionCallErrors(t *testing.T) {
	f := newFixtureWith(t, toolEngine{})
	tok := f.token(f.client(assistant.ScopeCorp), "ASSISTANT_API_CORP")
	chat := func(model, extra string) string {
		return `{"model":"` + model + `","messages":[{"role":"user","content":"x"}]` + extra + `}`
	}
	tests := []struct {
		name, body string
		status     int
		want       string
	}{
		{"model without functions", chat("plain", ","+weatherFunctions), 422, `{"status":422,"message":"Requested model does not support functions"}`},
		{"unknown named function", chat("qwen", ","+weatherFunctions+`,"function_call":{"name":"nope"}`), 422, `{"status":422,"message":"Invalid params: function_call.name must name one of the functions"}`},
		{"bad mode", chat("qwen", ","+weatherFunctions+`,"function_call":"always"`), 422, `{"status":422,"message":"Invalid params: function_call must be \"auto\", \"none\" or {\"name\": ...}"}`},
		{"function_call of the wrong type", chat("qwen", ","+weatherFunctions+`,"function_call":5`), 400, `{"status":400,"message":"function_call must be \"auto\", \"none\" or {\"name\": ...}"}`},
		{"partial_arguments not an object", chat("qwen", ","+weatherFunctions+`,"function_call":{"name":"weather_forecast","partial_arguments":[3]}`), 400, `{"status":400,"message":"function_call.partial_arguments must be a JSON object"}`},
		{"partial_arguments a string", chat("qwen", ","+weatherFunctions+`,"function_call":{"name":"weather_forecast","partial_arguments":"{}"}`), 400, `{"status":400,"message":"function_call.partial_arguments must be a JSON object"}`},
		{"parameters not a schema object", chat("qwen", `,"functions":[{"name":"f","parameters":[]}]`), 422, `{"status":422,"message":"Invalid params: functions[0].parameters must be a JSON Schema object"}`},
		{"chat with an embedder", chat("Embeddings", ""), 422, `{"status":422,"message":"Invalid params: model Embeddings is an embeddings model; use /embeddings"}`},
		// The provider refuses a history whose function call has no result
		// after it (assistant-grpc.md §4), at the end or before another call.
		{"call without a result", `{"model":"qwen","messages":[{"role":"user","content":"x"},{"role":"assistant","content":"","function_call":{"name":"weather_forecast","arguments":{"location":"Oslo"}}}],` + weatherFunctions + `}`, 422, `{"status":422,"message":"Invalid params: every assistant function call must have a result in history"}`},
		{"call without a result before the next call", `{"model":"qwen","messages":[{"role":"user","content":"x"},{"role":"assistant","content":"","function_call":{"name":"weather_forecast","arguments":{}}},{"role":"user","content":"y"},{"role":"assistant","content":"","function_call":{"name":"weather_forecast","arguments":{}}},{"role":"function","name":"weather_forecast","content":"{}"}],` + weatherFunctions + `}`, 422, `{"status":422,"message":"Invalid params: every assistant function call must have a result in history"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := f.call("POST", "/api/v1/chat/completions", tok, tt.body)
			if resp.StatusCode != tt.status || strings.TrimSpace(string(body)) != tt.want {
				t.Fatalf("got %d %s, want %d %s", resp.StatusCode, body, tt.status, tt.want)
			}
		})
	}
}

func TestEmbeddings(t *testing.T) {
	f := newFixtureWith(t, toolEngine{})
	prepaid := f.client(assistant.ScopeB2B, assistant.Balance{Model: "Embeddings", Tokens: 100})
	tok := f.token(prepaid, "ASSISTANT_API_B2B")
	// The npm client's exact request (reference §7), model defaulted.
	resp, body := f.call("POST", "/api/v1/embeddings", tok, `{"input":["First text","Second longer text"],"model":"Embeddings"}`)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	golden(t, "embeddings.json", body)
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil || top["usage"] != nil {
		t.Fatalf("top-level usage must be absent: %s", body)
	}
	_, body = f.call("GET", "/api/v1/balance", tok, "")
	if want := `{"balance":[{"usage":"Embeddings","value":95}]}`; strings.TrimSpace(string(body)) != want {
		t.Fatalf("balance after 2+3 tokens: %s, want %s", body, want)
	}
	resp, body = f.call("POST", "/api/v1/embeddings", tok, `{"input":"one string"}`)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"model":"Embeddings"`) || !strings.Contains(string(body), `"embedding":[10,2,0.5]`) {
		t.Fatalf("default model, string input: %d %s", resp.StatusCode, body)
	}

	broke := f.token(f.client(assistant.ScopePers, assistant.Balance{Model: "Embeddings", Tokens: 0}), "ASSISTANT_API_PERS")
	tests := []struct {
		name, token, body string
		status            int
		want              string
	}{
		{"empty input", tok, `{"input":[]}`, 400, `{"status":400,"message":"input must not be empty"}`},
		{"input of numbers", tok, `{"input":[1,2]}`, 400, `{"status":400,"message":"input must be an array of strings"}`},
		{"unknown model", tok, `{"input":["x"],"model":"nope"}`, 404, `{"status":404,"message":"No such model"}`},
		{"chat model", tok, `{"input":["x"],"model":"qwen"}`, 422, `{"status":422,"message":"Requested model does not support embeddings"}`},
		{"balance exhausted", broke, `{"input":["x"]}`, 402, `{"status":402,"message":"Payment Required"}`},
		{"no token", "", `{"input":["x"]}`, 401, `{"status":401,"message":"Unauthorized"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := f.call("POST", "/api/v1/embeddings", tt.token, tt.body)
			if resp.StatusCode != tt.status || strings.TrimSpace(string(body)) != tt.want {
				t.Fatalf("got %d %s, want %d %s", resp.StatusCode, body, tt.status, tt.want)
			}
		})
	}
}

// TestValidateFunctionGolden posts function descriptions and compares the
// answers with testdata/validate_NAME.json.
func TestValidateFunctionGolden(t *testing.T) {
	f := newFixtureWith(t, toolEngine{})
	tok := f.token(f.client(assistant.ScopeCorp), "ASSISTANT_API_CORP")
	cases := []struct{ name, body string }{
		{"valid", `{"name":"weather_forecast","description":"Прогноз погоды","parameters":{"type":"object","properties":{"location":{"type":"string","description":"Город"},"num_days":{"type":"integer","description":"Дней"}},"required":["location"]},"few_shot_examples":[{"request":"Погода в Москве на 3 дня","params":{"location":"Москва","num_days":3}}],"return_parameters":{"type":"object","properties":{"temperature":{"type":"number","description":"°C"}}}}`},
		{"no_examples", `{"name":"f","description":"d","parameters":{"type":"object","properties":{"a":{"type":"integer"}}}}`},
		{"no_name", `{"description":"d","parameters":{"type":"object","properties":{}},"few_shot_examples":[{"request":"r","params":{}}]}`},
		{"bad_name", `{"name":"1st-function","parameters":{"type":"object"}}`},
		{"bad_parameters", `{"name":"f","parameters":{"type":"array","properties":{"a":{"type":"text"},"b":5},"required":["a","c"]}}`},
		{"parameters_not_object", `{"name":"f","parameters":"a string"}`},
		{"bad_examples", `{"name":"f","description":"d","parameters":{"type":"object","properties":{"a":{"type":"integer","description":"A"}}},"few_shot_examples":[{"params":{"a":1,"zz":2}},"text"]}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := f.call("POST", "/api/v1/functions/validate", tok, tc.body)
			if resp.StatusCode != 200 {
				t.Fatalf("%d %s", resp.StatusCode, body)
			}
			var out struct {
				Status  int    `json:"status"`
				Message string `json:"message"`
				Errors  []any  `json:"errors"`
			}
			if err := json.Unmarshal(body, &out); err != nil || out.Status != 200 {
				t.Fatalf("%s %v", body, err)
			}
			if valid := tc.name == "valid" || tc.name == "no_examples"; valid != (out.Message == "Function is valid") || valid != (len(out.Errors) == 0) {
				t.Fatalf("message %q with %d errors", out.Message, len(out.Errors))
			}
			golden(t, fmt.Sprintf("validate_%s.json", tc.name), body)
		})
	}
	for _, bad := range []string{`[1]`, `"f"`, `{`} {
		resp, body := f.call("POST", "/api/v1/functions/validate", tok, bad)
		if resp.StatusCode != 400 || !strings.HasPrefix(string(body), `{"status":400,"message":`) {
			t.Errorf("body %s: %d %s", bad, resp.StatusCode, body)
		}
	}
}
