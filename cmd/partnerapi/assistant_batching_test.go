package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// sseAnswer is what a client assembles from a chat completion stream: each
// choice's text and finish reason, and the usage of the final event.
type sseAnswer struct {
	Text   map[int]string
	Finish map[int]string
	Usage  struct {
		Prompt     int `json:"prompt_tokens"`
		Completion int `json:"completion_tokens"`
		Precached  int `json:"precached_prompt_tokens"`
	}
}

func parseSSE(t *testing.T, body []byte) sseAnswer {
	t.Helper()
	a := sseAnswer{Text: map[int]string{}, Finish: map[int]string{}}
	events := strings.Split(strings.TrimSuffix(string(body), "\n\n"), "\n\n")
	if len(events) < 2 || events[len(events)-1] != "data: [DONE]" {
		t.Fatalf("not a finished stream: %s", body)
	}
	for _, ev := range events[:len(events)-1] {
		var e struct {
			Choices []struct {
				Delta        struct{ Content string } `json:"delta"`
				Index        int                      `json:"index"`
				FinishReason string                   `json:"finish_reason"`
			} `json:"choices"`
			Usage json.RawMessage `json:"usage"`
		}
		if err := json.Unmarshal([]byte(strings.TrimPrefix(ev, "data: ")), &e); err != nil {
			t.Fatalf("event %q: %v", ev, err)
		}
		for _, c := range e.Choices {
			a.Text[c.Index] += c.Delta.Content
			if c.FinishReason != "" {
				a.Finish[c.Index] = c.FinishReason
			}
		}
		if e.Usage != nil {
			if err := json.Unmarshal(e.Usage, &a.Usage); err != nil {
				t.Fatal(err)
			}
		}
	}
	return a
}

// engineMetric reads one series of the embedded engine from /metrics.
func engineMetric(t *testing.T, base, series string) float64 {
	t.Helper()
	_, body := get(t, base+"/metrics")
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindSubmatch(body)
	if m == nil {
		t.Fatalf("metrics lack %s", series)
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestAssistantConcurrentGreedyStreams runs `partnerapi serve` with
// stories260K and sends ten greedy streaming chat completions at once from
// one CORP client (its limit is 10), two of them with two choices, each of
// a different length: every stream must say exactly what the same request
// says alone, and the engine must have stepped them together.
func TestAssistantConcurrentGreedyStreams(t *testing.T) {
	data := t.TempDir()
	creds, err := createAssistantClient(t, data, "--scope", "ASSISTANT_API_CORP")
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, "--data-dir", data, "--models-dir", assistantModelsDir(t), "--only", "assistant")
	base := ts.urls["assistant"]
	c := &upstreamClient{t: t, base: base, token: assistantToken(t, base, "ASSISTANT_API_CORP", creds["authorization_key"])}
	prompts := []string{"Once upon a time", "Lily and Tom went to the", "The cat", "One day, a little boy",
		"Sam had a big red ball", "The sun was", "Once upon a time there", "Mom said", "The dog ran",
		strings.Repeat("Lily and Tom went to the park. ", 12)}
	body := func(i int) string {
		return fmt.Sprintf(`{"model":"stories260K","messages":[{"role":"user","content":%q}],"temperature":0,"max_tokens":%d,"n":%d,"stream":true}`,
			prompts[i], 120+10*i, 1+i%5/4)
	}
	chat := func(i int) sseAnswer {
		resp, raw := c.do(context.Background(), "POST", "/api/v1/chat/completions", body(i))
		if resp.StatusCode != 200 {
			t.Errorf("request %d: %d %s", i, resp.StatusCode, raw)
			return sseAnswer{}
		}
		return parseSSE(t, raw)
	}
	alone := make([]sseAnswer, len(prompts))
	for i := range prompts {
		alone[i] = chat(i)
	}
	const maxBatch = `partnerapi_engine_max_batch{model="stories260K"}`
	aloneBatch := engineMetric(t, base, maxBatch)
	together := make([]sseAnswer, len(prompts))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range prompts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			together[i] = chat(i)
		}()
	}
	close(start)
	wg.Wait()
	for i := range prompts {
		// The prefix cache may reuse more or less of a prompt, which
		// prompt_tokens leaves out; nothing else may differ.
		for _, a := range []*sseAnswer{&together[i], &alone[i]} {
			a.Usage.Prompt, a.Usage.Precached = a.Usage.Prompt+a.Usage.Precached, 0
		}
		if fmt.Sprint(together[i]) != fmt.Sprint(alone[i]) {
			t.Errorf("request %d together:\n%+v\nalone:\n%+v", i, together[i], alone[i])
		}
	}
	if got := engineMetric(t, base, maxBatch); got <= aloneBatch {
		t.Errorf("the streams never shared a step: max batch %v together, %v alone", got, aloneBatch)
	}
	if v := engineMetric(t, base, `partnerapi_engine_kv_bytes{model="stories260K",use="active"}`); v != 0 {
		t.Errorf("active KV bytes %v after every stream ended", v)
	}
}

// TestAssistantStreamHangUpFreesEngine runs `partnerapi serve` with one
// batch slot, hangs up in the middle of a stream and reads the engine's
// state from /metrics: the request and its KV memory leave the batch, and
// the slot takes the next request at once.
func TestAssistantStreamHangUpFreesEngine(t *testing.T) {
	data := t.TempDir()
	creds, err := createAssistantClient(t, data, "--scope", "ASSISTANT_API_CORP")
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, "--data-dir", data, "--models-dir", assistantModelsDir(t), "--only", "assistant", "--assistant-engine-concurrency", "1")
	base := ts.urls["assistant"]
	token := assistantToken(t, base, "ASSISTANT_API_CORP", creds["authorization_key"])
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp := holdStream(t, ctx, base, token, 10)
	const (
		active   = `partnerapi_engine_requests{model="stories260K",state="active"}`
		activeKV = `partnerapi_engine_kv_bytes{model="stories260K",use="active"}`
	)
	if r, kv := engineMetric(t, base, active), engineMetric(t, base, activeKV); r != 1 || kv == 0 {
		t.Fatalf("while streaming: %v active requests, %v KV bytes", r, kv)
	}
	cancel()
	resp.Body.Close()
	for deadline := time.Now().Add(5 * time.Second); engineMetric(t, base, active) != 0 || engineMetric(t, base, activeKV) != 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("5s after the hang-up the request is still in the batch")
		}
	}
	// The only slot is free: a request within two seconds gets it.
	quick, stop := context.WithTimeout(context.Background(), 2*time.Second)
	defer stop()
	c := &upstreamClient{t: t, base: base, token: token}
	if resp, raw := c.do(quick, "POST", "/api/v1/chat/completions", `{"model":"stories260K","messages":[{"role":"user","content":"The cat"}],"max_tokens":4}`); resp.StatusCode != 200 {
		t.Fatalf("after the hang-up: %d %s", resp.StatusCode, raw)
	}
}

// TestAssistantEngineQueueFlags runs `partnerapi serve` with one batch
// slot, a queue of one and no prefix cache: while a stream holds the slot
// one request waits, the next is answered 429 in the API's error format at
// once (not after a wait), the waiting one is served when the stream hangs
// up, and no finished prompt keeps its KV memory.
func TestAssistantEngineQueueFlags(t *testing.T) {
	data := t.TempDir()
	creds, err := createAssistantClient(t, data, "--scope", "ASSISTANT_API_CORP")
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, "--data-dir", data, "--models-dir", assistantModelsDir(t), "--only", "assistant",
		"--assistant-engine-concurrency", "1", "--assistant-engine-queue", "1", "--assistant-prefix-cache", "0")
	base := ts.urls["assistant"]
	token := assistantToken(t, base, "ASSISTANT_API_CORP", creds["authorization_key"])
	c := &upstreamClient{t: t, base: base, token: token}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The stream holds the slot once its first event has come.
	defer holdStream(t, ctx, base, token, 1).Body.Close()
	const queued = `partnerapi_engine_requests{model="stories260K",state="queued"}`
	short := `{"model":"stories260K","messages":[{"role":"user","content":"The cat"}],"max_tokens":4}`
	waited := make(chan int, 1)
	go func() {
		resp, _ := c.do(context.Background(), "POST", "/api/v1/chat/completions", short)
		waited <- resp.StatusCode
	}()
	for deadline := time.Now().Add(5 * time.Second); engineMetric(t, base, queued) != 1; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the second request never queued")
		}
	}
	// The stream holds the slot, and the queued request the queue, until
	// after the refusal or the stream's own end (about 18 s under -race),
	// so a request that waited for a place instead of failing fast is
	// answered 200 after the stream, or ends at its 30 s deadline: either
	// fails the test. How long the refusal took is not checked, since a
	// loaded machine stretches it.
	busyCtx, busyCancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer busyCancel()
	busy, raw := c.do(busyCtx, "POST", "/api/v1/chat/completions", short)
	var e struct {
		Status  int    `json:"status"`
		Message string `json:"message"`
	}
	if busy.StatusCode != http.StatusTooManyRequests || json.Unmarshal(raw, &e) != nil || e.Status != 429 || e.Message == "" {
		t.Fatalf("beyond the queue: %d %s", busy.StatusCode, raw)
	}
	if busy.Header.Get("Retry-After") == "" {
		t.Error("the busy answer has no Retry-After")
	}
	cancel()
	select {
	case code := <-waited:
		if code != 200 {
			t.Fatalf("the queued request: %d", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the queued request was not served after the stream hung up")
	}
	if v := engineMetric(t, base, `partnerapi_engine_cached_prompts{model="stories260K"}`); v != 0 {
		t.Errorf("%v prompts cached with --assistant-prefix-cache 0", v)
	}
}

// holdStream starts a long greedy stream of stories260K that ends only when
// ctx does, and reads it until events events have come, so that the
// stream is in the engine's batch when it returns.
func holdStream(t *testing.T, ctx context.Context, base, token string, events int) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "POST", base+"/api/v1/chat/completions", strings.NewReader(
		`{"model":"stories260K","messages":[{"role":"user","content":"Once upon a time"}],"temperature":0,"max_tokens":2000,"stream":true}`))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("stream: %d", resp.StatusCode)
	}
	buf := make([]byte, 4096)
	for seen := 0; seen < events; {
		n, err := resp.Body.Read(buf)
		if err != nil {
			t.Fatalf("stream ended after %d events: %v", seen, err)
		}
		seen += strings.Count(string(buf[:n]), "data: ")
	}
	return resp
}
