package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestAssistantUpstreamReplicas runs `serve` with one model served by two
// replicas (--assistant-upstream given twice for one name, one URL with
// credentials) and checks what a client and an operator see: the model
// listed once, concurrent streams spread over both, a stream cut mid-way
// ending in-band without a second answer, a killed replica unnoticed by
// clients but visible in /metrics and the log (without its credentials),
// and a prompt 503 once both are gone.
func TestAssistantUpstreamReplicas(t *testing.T) {
	var fakes [2]*fakeOpenAI
	var srvs [2]*httptest.Server
	for i := range fakes {
		fakes[i] = &fakeOpenAI{t: t, hangDone: make(chan struct{})}
		srvs[i] = httptest.NewServer(fakes[i])
		t.Cleanup(srvs[i].Close)
	}
	hosts := [2]string{strings.TrimPrefix(srvs[0].URL, "http://"), strings.TrimPrefix(srvs[1].URL, "http://")}
	data := t.TempDir()
	creds, err := createAssistantClient(t, data, "--scope", "ASSISTANT_API_CORP") // ten requests at a time
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, "--data-dir", data, "--only", "assistant",
		"--assistant-upstream", "GigaChat=http://operator:s3cret@"+hosts[0]+"#model=qwen2.5-7b",
		"--assistant-upstream", "GigaChat="+srvs[1].URL+"#model=qwen2.5-7b")
	base := ts.urls["assistant"]
	c := &upstreamClient{t: t, base: base, token: assistantToken(t, base, "GIGACHAT_API_CORP", creds["authorization_key"])}
	ctx := context.Background()
	chat := func(prompt, extra string) string {
		return `{"model":"GigaChat","messages":[{"role":"user","content":"` + prompt + `"}]` + extra + `}`
	}
	chats := func(f *fakeOpenAI, prompt string) int {
		f.mu.Lock()
		defer f.mu.Unlock()
		n := 0
		for _, r := range f.requests {
			msgs := r["messages"].([]any)
			if msgs[len(msgs)-1].(map[string]any)["content"] == prompt {
				n++
			}
		}
		return n
	}

	t.Run("listed once", func(t *testing.T) {
		_, body := c.do(ctx, "GET", "/api/v1/models", "")
		if n := strings.Count(string(body), `"GigaChat:1.0"`); n != 1 {
			t.Fatalf("GigaChat listed %d times: %s", n, body)
		}
	})
	t.Run("ten streams spread", func(t *testing.T) {
		var wg sync.WaitGroup
		errs := make(chan error, 10)
		for range 10 {
			wg.Go(func() {
				req, _ := http.NewRequest("POST", base+"/api/v1/chat/completions", strings.NewReader(chat("spread", `,"stream":true`)))
				req.Header.Set("Authorization", "Bearer "+c.token)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					errs <- err
					return
				}
				defer resp.Body.Close()
				body, err := io.ReadAll(resp.Body)
				if err != nil || resp.StatusCode != 200 || !strings.HasSuffix(string(body), "data: [DONE]\n\n") || strings.Contains(string(body), `"error"`) {
					errs <- fmt.Errorf("%d %v %s", resp.StatusCode, err, body)
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if a, b := chats(fakes[0], "spread"), chats(fakes[1], "spread"); a == 0 || b == 0 || a+b != 10 {
			t.Fatalf("the replicas answered %d and %d of ten streams", a, b)
		}
	})
	t.Run("cut mid-stream", func(t *testing.T) {
		resp, body := c.do(ctx, "POST", "/api/v1/chat/completions", chat("cut", `,"stream":true`))
		if resp.StatusCode != 200 || strings.Count(string(body), "Once") != 1 || !strings.Contains(string(body), `"finish_reason":"error"`) ||
			!strings.HasSuffix(string(body), "data: [DONE]\n\n") {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
		if n := chats(fakes[0], "cut") + chats(fakes[1], "cut"); n != 1 {
			t.Fatalf("the cut stream was sent %d times, want once", n)
		}
	})
	t.Run("one replica killed", func(t *testing.T) {
		srvs[0].Close()
		before := chats(fakes[1], "after the kill")
		for i := range 6 {
			resp, body := c.do(ctx, "POST", "/api/v1/chat/completions", chat("after the kill", ""))
			if resp.StatusCode != 200 || !strings.Contains(string(body), "Hello.") {
				t.Fatalf("request %d after the kill: %d %s", i, resp.StatusCode, body)
			}
		}
		if n := chats(fakes[1], "after the kill") - before; n != 6 {
			t.Fatalf("the live replica answered %d of 6", n)
		}
		_, metrics := get(t, base+"/metrics")
		for _, want := range []string{
			`partnerapi_upstream_healthy{host="` + hosts[0] + `",model="GigaChat"} 0`,
			`partnerapi_upstream_healthy{host="` + hosts[1] + `",model="GigaChat"} 1`,
			// A chat or a model list that met the kill counts 1 as
			// unreachable (the cut stream, if it went there, as stream).
			`partnerapi_upstream_failures_total{host="` + hosts[0] + `",model="GigaChat",reason="unreachable"} 1`,
			`partnerapi_upstream_failures_total{host="` + hosts[1] + `",model="GigaChat",reason="no_model"} 0`,
			`partnerapi_upstream_in_flight{host="` + hosts[1] + `",model="GigaChat"} 0`,
			`partnerapi_upstream_requests_total{host="` + hosts[1] + `",model="GigaChat"} `,
		} {
			if !strings.Contains(string(metrics), want) {
				t.Errorf("/metrics lacks %s", want)
			}
		}
		logs := ts.logs.String()
		if !strings.Contains(logs, "upstream replica down") || !strings.Contains(logs, hosts[0]) {
			t.Errorf("no log line on the replica going down:\n%s", logs)
		}
		for _, secret := range []string{"s3cret", "operator"} {
			if strings.Contains(string(metrics), secret) || strings.Contains(logs, secret) {
				t.Errorf("the replica's credentials (%s) are in the metrics or the log", secret)
			}
		}
	})
	t.Run("every replica gone", func(t *testing.T) {
		srvs[1].Close()
		for i := range 2 {
			start := time.Now()
			resp, body := c.do(ctx, "POST", "/api/v1/chat/completions", chat("hello", `,"stream":true`))
			if resp.StatusCode != 503 || strings.TrimSpace(string(body)) != `{"status":503,"message":"Service Unavailable"}` || resp.Header.Get("Retry-After") == "" {
				t.Fatalf("request %d: %d %s", i, resp.StatusCode, body)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("request %d took %v", i, d)
			}
		}
	})
}
