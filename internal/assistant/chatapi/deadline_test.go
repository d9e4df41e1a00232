package chatapi

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/assistant"
	"partnerapi/internal/web"
)

// slowEngine is toolEngine taking longer than the platform's write
// deadline for every answer, as a long generation does.
type slowEngine struct {
	toolEngine
	delay time.Duration
}

func (e slowEngine) wait(ctx context.Context) error {
	select {
	case <-time.After(e.delay):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (e slowEngine) Generate(ctx context.Context, req assistant.GenerateRequest, emit func(assistant.Delta) error) (assistant.Result, error) {
	if err := e.wait(ctx); err != nil {
		return assistant.Result{}, err
	}
	return e.toolEngine.Generate(ctx, req, emit)
}

func (e slowEngine) Embed(ctx context.Context, model string, inputs []string) ([]assistant.Embedding, error) {
	if err := e.wait(ctx); err != nil {
		return nil, err
	}
	return e.toolEngine.Embed(ctx, model, inputs)
}

// Surprisal makes the engine a Scorer, so /ai/check reaches it.
func (e slowEngine) Surprisal(ctx context.Context, _, text string) ([]assistant.TokenSurprisal, error) {
	if err := e.wait(ctx); err != nil {
		return nil, err
	}
	var out []assistant.TokenSurprisal
	for i := range strings.Fields(text) {
		out = append(out, assistant.TokenSurprisal{End: 2 * (i + 1), NLL: 5})
	}
	return out, nil
}

// TestAnswerAfterWriteDeadline checks that answers made after the
// platform's write deadline (2 minutes in production, 1 s here) still
// reach the client: non-streaming chat, embeddings and the AI check used
// to be dropped with a bare EOF after the work was done and billed.
//
// The deferred deadline starts again, WriteTimeout long, when the answer
// starts, and the answer leaves its buffer only once the handler and the
// middleware around it have returned: a WriteTimeout of 100 ms bet that a
// loaded machine runs all that within it (web's TestDeferWriteDeadline
// gives its answer a second for the same reason). The engine still
// answers after the deadline of the request's start.
func TestAnswerAfterWriteDeadline(t *testing.T) {
	const wt = time.Second
	f := newFixtureWith(t, slowEngine{delay: wt + 300*time.Millisecond}, func(a *web.API) { a.WriteTimeout = wt })
	tok := f.token(f.client(assistant.ScopeCorp), "ASSISTANT_API_CORP")
	tests := []struct{ name, path, body, want string }{
		{"chat", "/api/v1/chat/completions", `{"model":"plain","messages":[{"role":"user","content":"Hi"}]}`, `"object":"chat.completion"`},
		{"chat stream", "/api/v1/chat/completions", `{"model":"plain","stream":true,"messages":[{"role":"user","content":"Hi"}]}`, `data: [DONE]`},
		{"embeddings", "/api/v1/embeddings", `{"model":"Embeddings","input":["one two"]}`, `"embedding":[7,2,0.5]`},
		{"ai check", "/api/v1/ai/check", `{"model":"plain","input":"one two three four five six seven eight nine ten"}`, `"category":"human"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", f.url+tt.path, strings.NewReader(tt.body))
			req.Header.Set("Authorization", "Bearer "+tok)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("answer lost: %v", err)
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatalf("answer cut: %v (%q)", err, b)
			}
			if resp.StatusCode != 200 || !strings.Contains(string(b), tt.want) {
				t.Fatalf("got %d %s, want %s", resp.StatusCode, b, tt.want)
			}
		})
	}
}
