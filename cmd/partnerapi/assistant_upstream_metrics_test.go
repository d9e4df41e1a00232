package main

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"partnerapi/internal/assistant/upstream/upstreamtest"
)

// TestAssistantUpstreamChatMetrics: /metrics tells of an upstream model's
// chats what it tells of the embedded engine's (inference reference §10):
// the time to the first token and the prompt and completion tokens.
func TestAssistantUpstreamChatMetrics(t *testing.T) {
	srv := upstreamtest.New(t, func(int) upstreamtest.Chat {
		return upstreamtest.Chat{Events: []string{
			`{"choices":[{"index":0,"delta":{"role":"assistant","content":"Hello."}}]}`,
			`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
			`{"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3}}`,
			"[DONE]",
		}}
	})
	data := t.TempDir()
	creds, err := createAssistantClient(t, data, "--scope", "ASSISTANT_API_CORP")
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, "--data-dir", data, "--only", "assistant", "--assistant-upstream", "m="+srv.URL)
	base := ts.urls["assistant"]
	c := &upstreamClient{t: t, base: base, token: assistantToken(t, base, "GIGACHAT_API_CORP", creds["authorization_key"])}
	for _, stream := range []string{"true", "false"} {
		resp, body := c.do(context.Background(), "POST", "/api/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":`+stream+`}`)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "Hello.") {
			t.Fatalf("stream %s: %d %s", stream, resp.StatusCode, body)
		}
	}
	_, metrics := get(t, base+"/metrics")
	for _, want := range []string{
		`partnerapi_upstream_prompt_tokens_total{model="m"} 14`,
		`partnerapi_upstream_completion_tokens_total{model="m"} 6`,
		`partnerapi_upstream_time_to_first_token_seconds_count{model="m"} 2`,
		`partnerapi_upstream_time_to_first_token_seconds_bucket{model="m",le="60"} 2`,
	} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("/metrics lacks %s:\n%s", want, grepLines(string(metrics), "partnerapi_upstream_"))
		}
	}
}
