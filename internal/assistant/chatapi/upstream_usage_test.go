package chatapi

import (
	"strconv"
	"strings"
	"testing"

	"partnerapi/internal/assistant"
	"partnerapi/internal/assistant/upstream/upstreamtest"
)

// TestUpstreamCachedPromptTokens: the prompt tokens an upstream reports it
// reused from its cache (OpenAI's usage.prompt_tokens_details.cached_tokens,
// which vLLM and llama-server give too) are precached_prompt_tokens, left
// out of prompt_tokens and total_tokens and not billed (reference §3.3:
// total_tokens is billable, cached tokens subtracted), as the local
// engine's cache is; a report of more than the prompt counts as the whole
// prompt cached, and a server without the report caches nothing.
func TestUpstreamCachedPromptTokens(t *testing.T) {
	tests := []struct {
		name, details string
		want          string
		billed        int64
	}{
		{"cached", `,"prompt_tokens_details":{"cached_tokens":30}`, `{"prompt_tokens":10,"completion_tokens":3,"total_tokens":13,"precached_prompt_tokens":30}`, 13},
		{"more than the prompt", `,"prompt_tokens_details":{"cached_tokens":50}`, `{"prompt_tokens":0,"completion_tokens":3,"total_tokens":3,"precached_prompt_tokens":40}`, 3},
		{"negative", `,"prompt_tokens_details":{"cached_tokens":-5}`, `{"prompt_tokens":40,"completion_tokens":3,"total_tokens":43,"precached_prompt_tokens":0}`, 43},
		{"no report", ``, `{"prompt_tokens":40,"completion_tokens":3,"total_tokens":43,"precached_prompt_tokens":0}`, 43},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			events := []string{upOnce, `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":40,"completion_tokens":3` + tc.details + `}}`, "[DONE]"}
			f, _ := upstreamFixture(t, func(int) upstreamtest.Chat { return upstreamtest.Chat{Events: events} })
			tok := f.token(f.client(assistant.ScopeB2B, assistant.Balance{Model: "m", Tokens: 1000}), "ASSISTANT_API_B2B")
			for i, stream := range []bool{false, true} {
				resp, body := f.call("POST", "/api/v1/chat/completions", tok,
					`{"model":"m","stream":`+strconv.FormatBool(stream)+`,"messages":[{"role":"user","content":"hi there"}]}`)
				if resp.StatusCode != 200 || !strings.Contains(string(body), `"usage":`+tc.want) {
					t.Fatalf("stream %v: %d %s\nwant usage %s", stream, resp.StatusCode, body, tc.want)
				}
				_, bal := f.call("GET", "/api/v1/balance", tok, "")
				want := `{"balance":[{"usage":"m","value":` + strconv.FormatInt(1000-int64(i+1)*tc.billed, 10) + `}]}`
				if strings.TrimSpace(string(bal)) != want {
					t.Fatalf("stream %v: balance %s, want %s", stream, bal, want)
				}
			}
		})
	}
}
