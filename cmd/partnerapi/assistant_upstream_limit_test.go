package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/assistant/upstream/upstreamtest"
)

// TestAssistantUpstreamConcurrencyLimit runs `serve` with an upstream
// limited to one request at a time and one waiting
// (--assistant-upstream-concurrency 1 --assistant-upstream-queue 1): the
// second request waits without reaching the upstream, which /metrics
// shows, and the third is answered 429 with Retry-After at once (inference
// reference §9 and §10), though its client is far below its own limit.
func TestAssistantUpstreamConcurrencyLimit(t *testing.T) {
	srv := upstreamtest.New(t, func(int) upstreamtest.Chat {
		// Each chat streams a word and then holds until its client leaves.
		return upstreamtest.Chat{Events: []string{`{"choices":[{"index":0,"delta":{"role":"assistant","content":"Once"}}]}`}, Pause: -1}
	})
	data := t.TempDir()
	creds, err := createAssistantClient(t, data, "--scope", "ASSISTANT_API_CORP") // ten requests at a time
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, "--data-dir", data, "--only", "assistant", "--assistant-upstream", "m="+srv.URL,
		"--assistant-upstream-concurrency", "1", "--assistant-upstream-queue", "1")
	base := ts.urls["assistant"]
	c := &upstreamClient{t: t, base: base, token: assistantToken(t, base, "GIGACHAT_API_CORP", creds["authorization_key"])}
	const chat = `{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true}`

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan *http.Response, 2)
	for range 2 {
		go func() {
			req, _ := http.NewRequestWithContext(ctx, "POST", base+"/api/v1/chat/completions", strings.NewReader(chat))
			req.Header.Set("Authorization", "Bearer "+c.token)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				defer resp.Body.Close()
				started <- resp
				<-ctx.Done()
			}
		}()
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, metrics := get(t, base+"/metrics")
		if srv.Chats() == 1 && strings.Contains(string(metrics), `partnerapi_upstream_queued{model="m"} 1`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("want one chat at the upstream (got %d) and one queued:\n%s", srv.Chats(), grepLines(string(metrics), "partnerapi_upstream_"))
		}
		time.Sleep(10 * time.Millisecond)
	}

	resp, body := c.do(context.Background(), "POST", "/api/v1/chat/completions", chat)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" ||
		strings.TrimSpace(string(body)) != `{"status":429,"message":"Too Many Requests"}` {
		t.Fatalf("a request beyond the upstream's limit and queue: %d Retry-After %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	if n := srv.Chats(); n != 1 {
		t.Fatalf("the upstream got %d chats while one was allowed", n)
	}
	// The first stream ends (its client leaves): the queued one goes on.
	first := <-started
	first.Body.Close()
	cancelFirst := time.Now().Add(10 * time.Second)
	for srv.Chats() != 2 {
		if time.Now().After(cancelFirst) {
			t.Fatalf("the queued request never reached the upstream once the first ended (%d chats)", srv.Chats())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
