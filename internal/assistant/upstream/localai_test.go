package upstream

import (
	"context"
	"testing"
	"time"

	"partnerapi/internal/assistant"
	"partnerapi/internal/assistant/upstream/upstreamtest"
)

// LocalAI before v3.8.0 streamed role on every chunk and ended its streams
// without "data: [DONE]" (inference reference §9): a response that ends
// cleanly once every choice has its finish_reason is that server's whole
// answer, not a stream cut short. A stream that ends before a choice
// finished still is one (TestReadStreamCutMidChunk).
func TestStreamWithoutDoneOnceFinished(t *testing.T) {
	srv := upstreamtest.New(t, func(int) upstreamtest.Chat {
		return upstreamtest.Chat{
			Events: []string{`{"choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"}}]}`},
			Then: []string{
				`{"choices":[{"index":0,"delta":{"role":"assistant","content":"lo."}}]}`,
				`{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2}}`,
			},
		}
	})
	p := NewPool("m", Served{}, []string{srv.URL}, PoolOptions{Client: srv.Client, ProbeInterval: time.Hour})
	t.Cleanup(p.Close)
	var deltas []string
	res, err := p.Generate(context.Background(), assistant.GenerateRequest{Model: "m", N: 1, Messages: []assistant.Message{{Role: "user", Content: "hi"}}},
		func(d assistant.Delta) error { deltas = append(deltas, d.Text); return nil })
	if err != nil {
		t.Fatalf("a finished stream without [DONE]: %v", err)
	}
	if len(res.Choices) != 1 || res.Choices[0].Text != "Hello." || res.Choices[0].FinishReason != "stop" {
		t.Fatalf("choices %+v", res.Choices)
	}
	if res.Usage.PromptTokens != 5 || res.Usage.CompletionTokens != 2 {
		t.Fatalf("usage %+v", res.Usage)
	}
	if len(deltas) != 2 {
		t.Fatalf("deltas %q", deltas)
	}
	if n := srv.Chats(); n != 1 {
		t.Fatalf("the chat was sent %d times", n)
	}
}
