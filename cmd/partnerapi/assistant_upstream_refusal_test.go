package main

import (
	"context"
	"encoding/json"
	"testing"

	"partnerapi/internal/assistant/upstream/upstreamtest"
)

// TestAssistantUpstreamRefusal: an upstream that refuses a chat with 400 or
// 422 (a parameter its model does not take) is answered to the client with
// that status and the server's words in the assistant API's error body,
// streamed or not, and the chat is sent once.
func TestAssistantUpstreamRefusal(t *testing.T) {
	refusals := []upstreamtest.Chat{
		{Refuse: 400, Body: `{"object":"error","message":"best_of must be 1 when using greedy sampling.","type":"BadRequestError","code":400}`},
		{Refuse: 422, Body: `{"error":{"message":"tools[0].function.name is required","type":"invalid_request_error"}}`},
	}
	srv := upstreamtest.New(t, func(i int) upstreamtest.Chat { return refusals[i%2] })
	data := t.TempDir()
	creds, err := createAssistantClient(t, data, "--scope", "ASSISTANT_API_CORP")
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, "--data-dir", data, "--only", "assistant", "--assistant-upstream", "m="+srv.URL)
	base := ts.urls["assistant"]
	c := &upstreamClient{t: t, base: base, token: assistantToken(t, base, "GIGACHAT_API_CORP", creds["authorization_key"])}
	want := []struct {
		status  int
		message string
	}{
		{400, "best_of must be 1 when using greedy sampling."},
		{422, "Invalid params: tools[0].function.name is required"},
	}
	for i, stream := range []string{"false", "false", "true", "true"} {
		resp, body := c.do(context.Background(), "POST", "/api/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":`+stream+`}`)
		var got struct {
			Status  int    `json:"status"`
			Message string `json:"message"`
		}
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatalf("request %d: %d %s: %v", i, resp.StatusCode, body, err)
		}
		w := want[i%2]
		if resp.StatusCode != w.status || got.Status != w.status || got.Message != w.message {
			t.Errorf("request %d (stream %s): %d %s, want %d %q", i, stream, resp.StatusCode, body, w.status, w.message)
		}
	}
	if n := srv.Chats(); n != 4 {
		t.Errorf("the upstream received %d chats, want 4 (a refusal is not sent again)", n)
	}
}
