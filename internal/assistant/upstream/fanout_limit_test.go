package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"partnerapi/internal/assistant"
)

// A chat fanned out as n requests holds a place under the replica's
// MaxInFlight for each request that runs, so the replica never sees more
// than its limit at once, and chats that each want more places than are
// free still all end: with two places, four chats of three choices each
// (the race detector watches), and one chat of more choices than the limit.
// Where the replica has room, a chat's choices run alongside (FanOut).
func TestFanOutHoldsPlacePerRequest(t *testing.T) {
	for _, tc := range []struct {
		name         string
		limit, chats int
		n            int
		// most is the most requests the replica may see at once; exact
		// says it must see that many.
		most  int
		exact bool
	}{
		{name: "four chats of three over two places", limit: 2, chats: 4, n: 3, most: 2},
		{name: "more choices than places", limit: 1, chats: 1, n: 4, most: 1, exact: true},
		{name: "room for every choice", limit: 10, chats: 1, n: 4, most: 4, exact: true},
		{name: "no limit, FanOut alone", limit: 0, chats: 1, n: 4, most: 4, exact: true},
		{name: "two chats of four over five places", limit: 5, chats: 2, n: 4, most: 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeLlamaServer{delay: 100 * time.Millisecond}
			if tc.exact {
				// The replica must be seen running most at once: they
				// are held until it is, rather than trusted to start
				// within one delay of each other.
				f.together = tc.most
			}
			srv := httptest.NewServer(http.HandlerFunc(f.ServeHTTP))
			t.Cleanup(srv.Close)
			p := NewPool("m", Served{}, []string{srv.URL}, PoolOptions{MaxInFlight: tc.limit})
			t.Cleanup(p.Close)

			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var wg sync.WaitGroup
			for c := range tc.chats {
				wg.Go(func() {
					res, err := p.Generate(ctx, assistant.GenerateRequest{Model: "m", N: tc.n, Seed: uint64(100 * (c + 1)),
						Messages: []assistant.Message{{Role: "user", Content: "hi"}}}, func(assistant.Delta) error { return nil })
					if err != nil {
						t.Errorf("chat %d: %v", c, err)
						return
					}
					for i, ch := range res.Choices {
						if want := fmt.Sprintf("seed %d", 100*(c+1)+i); ch.Index != i || ch.Text != want {
							t.Errorf("chat %d choice %d: %+v, want %q", c, i, ch, want)
						}
					}
					if len(res.Choices) != tc.n {
						t.Errorf("chat %d: %d choices, want %d", c, len(res.Choices), tc.n)
					}
				})
			}
			wg.Wait()

			f.mu.Lock()
			most, asked := f.most, len(f.ns)
			f.mu.Unlock()
			if most > tc.most || (tc.exact && most != tc.most) {
				t.Errorf("the replica ran %d requests at once, want %d at most (exactly: %v)", most, tc.most, tc.exact)
			}
			if asked != tc.chats*tc.n {
				t.Errorf("the replica was asked %d chats, want %d", asked, tc.chats*tc.n)
			}
			st := p.Stats()[0]
			if st.InFlight != 0 || p.Queued() != 0 {
				t.Errorf("after the chats: %d in flight, %d queued", st.InFlight, p.Queued())
			}
			if st.Requests != int64(tc.chats) {
				t.Errorf("requests counted %d, want one a chat (%d)", st.Requests, tc.chats)
			}
		})
	}
}

// gatedServer is a llama-server whose chat requests each wait until the
// test lets one of the chat they belong to (named by its message) end, so
// a test decides which request frees its place and sees, in arrivals,
// which request the freed place went to.
type gatedServer struct {
	gates    map[string]chan struct{}
	arrivals chan string
}

func (g *gatedServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/v1/models":
		fmt.Fprint(w, `{"object":"list","data":[{"id":"m","object":"model","owned_by":"llamacpp"}]}`)
		return
	case "/v1/chat/completions":
	default:
		http.NotFound(w, r)
		return
	}
	var req struct {
		Messages []struct{ Content string }
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	tag := req.Messages[0].Content
	g.arrivals <- tag
	select {
	case <-g.gates[tag]:
	case <-r.Context().Done():
		return
	}
	sse(w, fmt.Sprintf(`{"choices":[{"index":0,"delta":{"content":%q},"finish_reason":"stop"}]}`, tag),
		`{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1}}`, "[DONE]")
}

// A fanned-out chat already running does not take a freed place from a
// request waiting in the queue: with two places, one held by chat X and one
// by chat F's first choice, F's other choices wait, and the place X frees
// goes to the queued chat Y. Once F's first choice ends, its own place runs
// the second, and the place Y freed runs the third alongside.
func TestFanOutYieldsToQueue(t *testing.T) {
	g := &gatedServer{gates: map[string]chan struct{}{"X": make(chan struct{}), "Y": make(chan struct{}), "F": make(chan struct{})},
		arrivals: make(chan string, 8)}
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	// Run before srv.Close: a failed test leaves no request waiting.
	t.Cleanup(func() {
		for _, gate := range g.gates {
			close(gate)
		}
	})
	p := NewPool("m", Served{}, []string{srv.URL}, PoolOptions{MaxInFlight: 2})
	t.Cleanup(p.Close)

	arrival := func(want string) {
		t.Helper()
		select {
		case got := <-g.arrivals:
			if got != want {
				t.Fatalf("the replica was sent a request of chat %s, want %s", got, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no request of chat %s reached the replica", want)
		}
	}
	let := func(tag string) {
		t.Helper()
		select {
		case g.gates[tag] <- struct{}{}:
		case <-time.After(5 * time.Second):
			t.Fatalf("no request of chat %s waits to end", tag)
		}
	}
	done := make(chan string, 3)
	chat := func(tag string, n int) {
		go func() {
			res, err := p.Generate(context.Background(), assistant.GenerateRequest{Model: "m", N: n,
				Messages: []assistant.Message{{Role: "user", Content: tag}}}, nil)
			if err != nil || len(res.Choices) != n {
				t.Errorf("chat %s: %d choices, %v", tag, len(res.Choices), err)
			}
			done <- tag
		}()
	}
	chat("X", 1)
	arrival("X")
	chat("F", 3)
	arrival("F")
	chat("Y", 1)
	waitFor(t, "Y queued", func() bool { return p.Queued() == 1 })
	if in := p.Stats()[0].InFlight; in != 2 {
		t.Fatalf("in flight %d, want X and F's first choice", in)
	}

	let("X")
	arrival("Y")
	let("Y")
	waitFor(t, "X and Y done", func() bool { return len(done) == 2 })
	let("F")
	arrival("F")
	arrival("F")
	if in := p.Stats()[0].InFlight; in != 2 {
		t.Errorf("in flight %d while F's last two choices run, want 2", in)
	}
	let("F")
	let("F")
	waitFor(t, "F done", func() bool { return len(done) == 3 })
	if in := p.Stats()[0].InFlight; in != 0 {
		t.Errorf("in flight %d after every chat", in)
	}
}
