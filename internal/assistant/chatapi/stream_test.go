package chatapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/assistant"
)

// TestStreamDisconnect checks that a client hanging up stops generation,
// which is billed what it consumed (the prompt and the tokens generated up
// to the cut, so no more than the engine's 256-token window), and frees
// its concurrency slot.
func TestStreamDisconnect(t *testing.T) {
	f := newFixture(t)
	c := f.client(assistant.ScopePers, assistant.Balance{Model: "stories260K", Tokens: 100000})
	tok := f.token(c, "ASSISTANT_API_PERS")
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", f.url+"/api/v1/chat/completions",
		strings.NewReader(`{"model":"stories260K","messages":[{"role":"user","content":"Hi"}],"max_tokens":100000,"stream":true}`))
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	if _, err := resp.Body.Read(buf); err != nil || !strings.HasPrefix(string(buf), "data: ") {
		t.Fatalf("first read %q %v", buf, err)
	}
	cancel()
	resp.Body.Close()
	p := assistant.Principal{ClientID: c.ClientID, Scope: assistant.ScopePers}
	deadline := time.Now().Add(5 * time.Second)
	for {
		release, err := f.svc.Acquire(context.Background(), p)
		if err == nil {
			release()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("slot not freed 5s after the client hung up")
		}
		time.Sleep(10 * time.Millisecond)
	}
	bs, err := f.svc.Balance(context.Background(), p)
	if err != nil || len(bs) != 1 || bs[0].Tokens >= 100000 || bs[0].Tokens < 100000-256 {
		t.Fatalf("balance after a cancelled stream %+v %v (generation should have stopped, billed for what it consumed)", bs, err)
	}
}

// scriptEngine emits fixed pieces with a pause between them, then returns
// err (if set): it drives what stories260K cannot, a mid-stream failure and
// update_interval timing.
type scriptEngine struct {
	pieces []string
	pause  time.Duration
	err    error
}

func (e scriptEngine) Models(context.Context) ([]assistant.ModelInfo, error) {
	return []assistant.ModelInfo{{Name: "script", Version: "1", OwnedBy: "test", Type: "chat", ContextWindow: 100}}, nil
}
func (e scriptEngine) CountTokens(context.Context, string, string) (int, error) { return 1, nil }
func (e scriptEngine) Generate(ctx context.Context, req assistant.GenerateRequest, emit func(assistant.Delta) error) (assistant.Result, error) {
	text := ""
	for _, p := range e.pieces {
		time.Sleep(e.pause)
		if emit != nil {
			if err := emit(assistant.Delta{Text: p}); err != nil {
				return assistant.Result{}, err
			}
		}
		text += p
	}
	if e.err != nil {
		return assistant.Result{}, e.err
	}
	return assistant.Result{Choices: []assistant.Choice{{Text: text, FinishReason: "stop"}},
		Usage: assistant.Usage{PromptTokens: 2, CompletionTokens: len(e.pieces)}}, nil
}

func TestStreamScripted(t *testing.T) {
	tests := []struct {
		name   string
		engine scriptEngine
		extra  string
		events int // data events before [DONE]
		finish string
	}{
		// Every piece is its own event when update_interval is 0.
		{"no interval", scriptEngine{pieces: []string{"a", "b", "c", "d"}, pause: 30 * time.Millisecond}, "", 5, "stop"},
		// Within a 1s update_interval the first piece goes out at once and
		// the rest are batched into one event at the end.
		{"interval", scriptEngine{pieces: []string{"a", "b", "c", "d"}, pause: 20 * time.Millisecond}, `,"update_interval":1`, 3, "stop"},
		// A failure after the first byte ends in-band with finish_reason error.
		{"mid-stream error", scriptEngine{pieces: []string{"a", "b"}, err: errors.New("boom")}, "", 3, "error"},
		// Text held back by update_interval still goes out before the
		// in-band error end, as it would have without the interval.
		{"mid-stream error in an interval", scriptEngine{pieces: []string{"a", "b", "c"}, pause: 10 * time.Millisecond, err: errors.New("boom")}, `,"update_interval":1`, 3, "error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixtureWith(t, tt.engine)
			tok := f.token(f.client(assistant.ScopeCorp), "ASSISTANT_API_CORP")
			resp, body := f.call("POST", "/api/v1/chat/completions", tok, `{"model":"script","stream":true,"messages":[{"role":"user","content":"x"}]`+tt.extra+`}`)
			if resp.StatusCode != 200 {
				t.Fatalf("%d %s", resp.StatusCode, body)
			}
			events := strings.Split(strings.TrimSuffix(string(body), "\n\n"), "\n\n")
			if len(events)-1 != tt.events || events[len(events)-1] != "data: [DONE]" {
				t.Fatalf("%d events, want %d + [DONE]:\n%s", len(events)-1, tt.events, body)
			}
			if !strings.Contains(events[len(events)-2], `"finish_reason":"`+tt.finish+`"`) || !strings.Contains(events[len(events)-2], `"usage":`) {
				t.Fatalf("final event %s", events[len(events)-2])
			}
			var all strings.Builder
			for _, ev := range events[:len(events)-1] {
				var e streamEvent
				if err := json.Unmarshal([]byte(strings.TrimPrefix(ev, "data: ")), &e); err != nil {
					t.Fatal(err)
				}
				all.WriteString(e.Choices[0].Delta.Content)
			}
			if want := strings.Join(tt.engine.pieces, ""); all.String() != want {
				t.Fatalf("content %q, want %q", all.String(), want)
			}
		})
	}
}
