package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"partnerapi/internal/assistant"
)

// modelServer serves one model, whose id it lists and whose chats it
// answers; a chat for any other model is answered 404 in the body its kind
// of server sends (vLLM's, Ollama's or a llama-server router's).
type modelServer struct {
	name   string
	kind   string       // "vllm", "ollama" or "llama"
	serves atomic.Value // the model id it serves
	chats  atomic.Int32
	lists  atomic.Int32
	srv    *httptest.Server
}

// notFound is each kind's answer to a chat for a model it does not serve.
var notFound = map[string]string{
	"vllm":   `{"object":"error","message":"The model ` + "`m`" + ` does not exist.","type":"NotFoundError","param":null,"code":404}`,
	"ollama": `{"error":{"message":"model \"m\" not found, try pulling it first","type":"api_error","param":null,"code":null}}`,
	"llama":  `{"error":{"code":404,"message":"model not found","type":"not_found_error"}}`,
}

func newModelServer(t *testing.T, name, kind, serves string) *modelServer {
	s := &modelServer{name: name, kind: kind}
	s.serves.Store(serves)
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		serves := s.serves.Load().(string)
		switch r.URL.Path {
		case "/v1/models":
			s.lists.Add(1)
			if kind == "ollama" {
				serves += ":latest"
			}
			fmt.Fprintf(w, `{"object":"list","data":[{"id":%q,"object":"model"}]}`, serves)
		case "/v1/chat/completions":
			s.chats.Add(1)
			var req struct{ Model string }
			_ = json.NewDecoder(r.Body).Decode(&req)
			if req.Model != serves {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusNotFound)
				fmt.Fprint(w, notFound[kind])
				return
			}
			sse(w, fmt.Sprintf(`{"choices":[{"index":0,"delta":{"content":%q},"finish_reason":"stop"}]}`, "from "+s.name),
				`{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2}}`, "[DONE]")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// A replica that answers 404 for the model (it was started with another
// one) loses the request to a replica that serves it, before the client
// saw anything, and gets no further requests for the model until its
// model list shows it; when every replica says 404 the answer is the
// API's own ErrNoSuchModel (404 "No such model" over REST, NOT_FOUND over
// gRPC), as it was before pools failed over on it.
func TestPoolNoModelFailover(t *testing.T) {
	for _, tc := range []struct {
		name   string
		kinds  []string // each replica's kind
		serves []string // each replica's model
		killed int      // a replica killed before the first request, -1 none
		want   string   // the first answer, or the error
	}{
		{"vllm lacks it", []string{"vllm", "vllm"}, []string{"other", "m"}, -1, "from 1"},
		{"ollama lacks it", []string{"ollama", "ollama"}, []string{"other", "m"}, -1, "from 1"},
		{"llama-server router lacks it", []string{"llama", "llama"}, []string{"other", "m"}, -1, "from 1"},
		// Two replicas saying 404 do not use up the one failover.
		{"two of three lack it", []string{"vllm", "ollama", "vllm"}, []string{"other", "other", "m"}, -1, "from 2"},
		{"every replica lacks it", []string{"vllm", "ollama"}, []string{"other", "other"}, -1, "no such model"},
		// The model may be on the replica that could not be reached: 503.
		{"one lacks it, the other is down", []string{"vllm", "vllm"}, []string{"other", "m"}, 1, "inference backend unavailable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var servers []*modelServer
			var bases []string
			for i, kind := range tc.kinds {
				s := newModelServer(t, fmt.Sprint(i), kind, tc.serves[i])
				servers, bases = append(servers, s), append(bases, s.srv.URL)
			}
			if tc.killed >= 0 {
				servers[tc.killed].srv.Close()
			}
			// The probes look every 10 ms but find no model until the
			// test loads it.
			p := NewPool("m", Served{}, bases, PoolOptions{ProbeInterval: 10 * time.Millisecond, ProbeMaxInterval: 20 * time.Millisecond})
			t.Cleanup(p.Close)
			got, err := hello(context.Background(), p, nil)
			if err != nil {
				got = err.Error()
			}
			if !strings.Contains(got, tc.want) {
				t.Fatalf("first request: %q, want %q", got, tc.want)
			}
			lacking := 0
			for i, s := range servers {
				if tc.serves[i] != "m" && i != tc.killed {
					lacking++
					if n := p.Stats()[i].FailuresBy[ReasonNoModel]; n != 1 {
						t.Errorf("replica %d lacking the model counts %d no_model failures, want 1", i, n)
					}
					if s.chats.Load() != 1 {
						t.Errorf("replica %d lacking the model was asked %d times", i, s.chats.Load())
					}
				}
			}
			if lacking == len(servers) {
				if !errors.Is(err, assistant.ErrNoSuchModel) {
					t.Fatalf("every replica lacking the model: %v, want ErrNoSuchModel", err)
				}
				// Asked again, none of them is: they said so already.
				if _, err := hello(context.Background(), p, nil); !errors.Is(err, assistant.ErrNoSuchModel) {
					t.Fatalf("second request: %v, want ErrNoSuchModel", err)
				}
				for i, s := range servers {
					if s.chats.Load() != 1 {
						t.Errorf("replica %d was asked again: %d chats", i, s.chats.Load())
					}
				}
			}
			if tc.killed >= 0 {
				return
			}
			// Further requests leave the replicas lacking the model alone.
			for range 4 {
				_, _ = hello(context.Background(), p, nil)
			}
			for i, s := range servers {
				if tc.serves[i] != "m" && s.chats.Load() != 1 {
					t.Errorf("replica %d lacking the model was asked %d times in all", i, s.chats.Load())
				}
			}
			// Loaded with the model, replica 0 serves it again once its
			// probe's model list shows it.
			servers[0].serves.Store("m")
			waitFor(t, "replica 0 to serve the model again", func() bool {
				got, err := hello(context.Background(), p, nil)
				return err == nil && got == "from 0"
			})
		})
	}
}

// The pool's model list is that of a replica naming the model, not of the
// first replica that answered with another one.
func TestPoolModelsPreferNamed(t *testing.T) {
	a, b := newModelServer(t, "0", "vllm", "other"), newModelServer(t, "1", "vllm", "m")
	p := NewPool("m", Served{}, []string{a.srv.URL, b.srv.URL}, PoolOptions{})
	t.Cleanup(p.Close)
	ms, err := p.Models(context.Background())
	if err != nil || len(ms) != 1 || ms[0].Name != "m" {
		t.Fatalf("got %+v %v, want the list naming m", ms, err)
	}
}
