package upstream

import (
	"context"
	"errors"
	"testing"
	"time"

	"partnerapi/internal/assistant"
	"partnerapi/internal/assistant/upstream/upstreamtest"
)

// The SSE events of the cut tests. upstreamtest counts a token a word, and
// the prompt "hi there" is two.
const (
	cutRole  = `{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`
	cutOnce  = `{"choices":[{"index":0,"delta":{"content":"Once upon"}}]}`
	cutTime  = `{"choices":[{"index":0,"delta":{"content":" a time"}}]}`
	cutCall1 = `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"weather_forecast","arguments":""}}]}}]}`
	cutCall2 = `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"location\": \"Oslo\","}}]}}]}`
	cutCall3 = `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":" \"days\": 3"}}]}}]}`
	cutLong  = `{"choices":[{"index":0,"delta":{"content":"one two three four five six"}}]}`
)

// cutReq is the chat of the cut tests.
func cutReq(n, maxTokens int) assistant.GenerateRequest {
	return assistant.GenerateRequest{Model: "m", N: n, MaxTokens: maxTokens, Messages: []assistant.Message{{Role: "user", Content: "hi there"}}}
}

// TestUpstreamCutUsage cuts chats that a pool's replica is generating,
// once the engine has read the given events, and checks the usage the
// pool returns with the cancellation: the prompt and what was read (text
// and tool-call fragments), at most max_tokens a choice, and nothing
// before the upstream streamed any of the answer. The answer need not be
// streamed to the client: the engine reads the upstream's stream either
// way.
func TestUpstreamCutUsage(t *testing.T) {
	for _, tc := range []struct {
		name      string
		events    []string
		n, max    int
		streamed  bool
		want      assistant.Usage
		wantReads int // chat streams read up to the marker before the cut
	}{
		{"text", []string{cutRole, cutOnce, cutTime}, 1, 100, false, assistant.Usage{PromptTokens: 2, CompletionTokens: 4}, 1},
		{"text, streamed", []string{cutRole, cutOnce, cutTime}, 1, 100, true, assistant.Usage{PromptTokens: 2, CompletionTokens: 4}, 1},
		// `weather_forecast{"location": "Oslo", "days": 3`: four words.
		{"tool call fragments", []string{cutRole, cutCall1, cutCall2, cutCall3}, 1, 100, false, assistant.Usage{PromptTokens: 2, CompletionTokens: 4}, 1},
		{"at most max_tokens", []string{cutRole, cutLong}, 1, 3, false, assistant.Usage{PromptTokens: 2, CompletionTokens: 3}, 1},
		{"before any delta", []string{cutRole}, 1, 100, false, assistant.Usage{}, 1},
		{"before any delta, streamed", []string{cutRole}, 1, 100, true, assistant.Usage{}, 1},
		// A llama-server answers one choice a request: two requests, the
		// prompt billed once.
		{"two choices fanned out", []string{cutRole, cutOnce, cutTime}, 2, 100, false, assistant.Usage{PromptTokens: 2, CompletionTokens: 8}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := upstreamtest.New(t, func(int) upstreamtest.Chat {
				return upstreamtest.Chat{Events: tc.events, Pause: -1}
			})
			p := NewPool("m", Served{}, []string{srv.URL}, PoolOptions{Client: srv.Client, ProbeInterval: time.Hour})
			t.Cleanup(p.Close)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				for range tc.wantReads {
					<-srv.Read
				}
				cancel()
			}()
			var emit func(assistant.Delta) error
			if tc.streamed {
				emit = func(assistant.Delta) error { return nil }
			}
			res, err := p.Generate(ctx, cutReq(tc.n, tc.max), emit)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err %v, want the cancellation", err)
			}
			if res.Usage != tc.want {
				t.Fatalf("usage %+v, want %+v", res.Usage, tc.want)
			}
		})
	}
}

// A transport that cannot deliver a delta (the client is gone) stops the
// stream with its error, and the usage counts the text read up to it,
// the undelivered delta too: it was generated.
func TestUpstreamCutByEmit(t *testing.T) {
	srv := upstreamtest.New(t, func(int) upstreamtest.Chat {
		return upstreamtest.Chat{Events: []string{cutRole, cutOnce, cutTime}, Pause: -1}
	})
	p := NewPool("m", Served{}, []string{srv.URL}, PoolOptions{Client: srv.Client, ProbeInterval: time.Hour})
	t.Cleanup(p.Close)
	gone := errors.New("the client is gone")
	res, err := p.Generate(context.Background(), cutReq(1, 100), func(d assistant.Delta) error {
		if d.Text == " a time" {
			return gone
		}
		return nil
	})
	if !errors.Is(err, gone) || res.Usage != (assistant.Usage{PromptTokens: 2, CompletionTokens: 4}) {
		t.Fatalf("err %v, usage %+v", err, res.Usage)
	}
}

// A replica whose stream breaks before any of the answer reached the
// client still loses the request to another, and a cut there counts only
// what the other replica streamed: the broken stream is our failure.
func TestUpstreamCutAfterFailover(t *testing.T) {
	a := newReplica(t, "a")
	a.mode.Store("cut") // one delta ("Once"), then the connection drops
	b := upstreamtest.New(t, func(int) upstreamtest.Chat {
		return upstreamtest.Chat{Events: []string{cutRole, cutTime}, Pause: -1}
	})
	p := NewPool("m", Served{}, []string{a.url(), b.URL}, PoolOptions{Client: b.Client, ProbeInterval: time.Hour})
	t.Cleanup(p.Close)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-b.Read
		cancel()
	}()
	res, err := p.Generate(ctx, cutReq(1, 100), nil)
	if !errors.Is(err, context.Canceled) || a.chats.Load() != 1 || b.Chats() != 1 {
		t.Fatalf("err %v, chats a %d b %d", err, a.chats.Load(), b.Chats())
	}
	if want := (assistant.Usage{PromptTokens: 2, CompletionTokens: 2}); res.Usage != want {
		t.Fatalf("usage %+v, want %+v", res.Usage, want)
	}
}
