package upstream

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"partnerapi/internal/assistant"
)

// FuzzClampMaxTokens holds the reading of what an upstream says of its
// context window (vLLM's /v1/models, llama-server's /props) and of a
// prompt's size (/tokenize) to what a request may be sent: whatever the
// three answers, max_tokens goes out as at most what the client asked
// and never negative (0: none sent), or the request is refused as over
// the window, or as the upstream's fault; never anything else.
func FuzzClampMaxTokens(f *testing.F) {
	f.Add(`{"data":[{"id":"m","owned_by":"vllm","max_model_len":4096}]}`, `{}`, `{"tokens":[1,2,3],"count":3}`, 999999999)
	f.Add(`{"data":[{"id":"m"}]}`, `{"default_generation_settings":{"n_ctx":512},"n_ctx":2048}`, `{"tokens":[1,2,3]}`, 100)
	f.Add(`{"data":[{"id":"m","max_model_len":-5}]}`, `{"n_ctx":-1}`, `{"tokens":[]}`, 1)
	f.Add(`{"data":[{"id":"m"}]}`, `{"n_ctx":4}`, `{"tokens":[1,2,3,4,5]}`, 10)
	f.Add(`not json`, `[]`, `{"tokens":null}`, 0)
	var mu sync.Mutex
	var models, props, tokenize string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		switch r.URL.Path {
		case "/v1/models":
			w.Write([]byte(models))
		case "/props":
			w.Write([]byte(props))
		case "/tokenize":
			w.Write([]byte(tokenize))
		default:
			http.NotFound(w, r)
		}
	}))
	f.Cleanup(srv.Close)
	f.Fuzz(func(t *testing.T, m, p, tk string, maxTokens int) {
		if len(m)+len(p)+len(tk) > 2048 || maxTokens < 0 || maxTokens > 1<<30 {
			return
		}
		mu.Lock()
		models, props, tokenize = m, p, tk
		mu.Unlock()
		e := New(srv.URL, srv.Client())
		req := assistant.GenerateRequest{Model: "m", N: 1, MaxTokens: maxTokens, Messages: []assistant.Message{{Role: "user", Content: "hi there"}}}
		got, err := e.clampMaxTokens(context.Background(), req)
		switch {
		case err == nil:
			if got < 0 || got > maxTokens {
				t.Fatalf("models %q props %q tokenize %q: max_tokens %d sent for %d", m, p, tk, got, maxTokens)
			}
		case errors.Is(err, assistant.ErrContextWindow), faultOf(err) != nil:
		default:
			t.Fatalf("models %q props %q tokenize %q: %v", m, p, tk, err)
		}
	})
}
