package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"partnerapi/internal/testenv"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"partnerapi/internal/assistant"
)

// fakeReplica is one llama-server of a pool, on an address that outlives
// it: kill closes its listener (connections are refused from then on) and
// start listens there again, as a restarted server would. Its chat answer
// names the replica, so a test sees who served a request, and mode makes
// it fail: "503", "429", "502" and "400" answer that status, "cut" sends
// one delta and drops the connection, "hang" sends no chat headers until
// the client gives up, and "hung" answers no request at all. While hold is
// set, chat requests wait for it to close.
type fakeReplica struct {
	name   string
	window int // /props n_ctx, 0: no /props
	mode   atomic.Value
	hold   chan struct{}

	chats, holding atomic.Int32
	mu             sync.Mutex
	maxTokens      []any    // max_tokens of each chat request, nil when absent
	shapes         []string // the text field of each /tokenize request
	srv            *httptest.Server
	addr           string
}

func newReplica(t *testing.T, name string) *fakeReplica {
	f := &fakeReplica{name: name}
	f.mode.Store("")
	f.start(t)
	t.Cleanup(func() { f.kill() })
	return f
}

func (f *fakeReplica) start(t *testing.T) {
	t.Helper()
	addr := f.addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(f)
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	f.mu.Lock()
	f.srv, f.addr = srv, l.Addr().String()
	f.mu.Unlock()
}

func (f *fakeReplica) kill() {
	f.mu.Lock()
	srv := f.srv
	f.mu.Unlock()
	srv.Close()
}

func (f *fakeReplica) url() string { return "http://" + f.addr }

func (f *fakeReplica) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f.mode.Load() == "hung" {
		// Accepts connections and answers nothing at all.
		<-r.Context().Done()
		return
	}
	switch r.URL.Path {
	case "/v1/models":
		fmt.Fprint(w, `{"object":"list","data":[{"id":"m","object":"model","owned_by":"llamacpp"}]}`)
	case "/props":
		if f.window == 0 {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintf(w, `{"default_generation_settings":{"n_ctx":%d}}`, f.window)
	case "/tokenize":
		b, _ := io.ReadAll(r.Body)
		var req map[string]any
		_ = json.Unmarshal(b, &req)
		f.mu.Lock()
		if _, ok := req["prompt"]; ok {
			f.shapes = append(f.shapes, "prompt")
		} else {
			f.shapes = append(f.shapes, "content")
		}
		f.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(b))
		byteTokens(w, r)
	case "/v1/embeddings":
		fmt.Fprintf(w, `{"data":[{"embedding":[%d]}],"usage":{"prompt_tokens":1}}`, len(f.name))
	case "/v1/chat/completions":
		f.chat(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeReplica) chat(w http.ResponseWriter, r *http.Request) {
	var req struct {
		MaxTokens *int `json:"max_tokens"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	f.chats.Add(1)
	f.mu.Lock()
	if req.MaxTokens == nil {
		f.maxTokens = append(f.maxTokens, nil)
	} else {
		f.maxTokens = append(f.maxTokens, *req.MaxTokens)
	}
	f.mu.Unlock()
	switch mode := f.mode.Load().(string); mode {
	case "503", "429", "502", "400":
		status := map[string]int{"503": 503, "429": 429, "502": 502, "400": 400}[mode]
		http.Error(w, `{"error":{"message":"refused"}}`, status)
		return
	case "hang":
		<-r.Context().Done()
		return
	case "cut":
		sse(w, `{"choices":[{"index":0,"delta":{"content":"Once"}}]}`)
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
		}
		return
	}
	if f.hold != nil {
		f.holding.Add(1)
		select {
		case <-f.hold:
		case <-r.Context().Done():
			return
		}
	}
	sse(w, `{"choices":[{"index":0,"delta":{"content":"from "}}]}`,
		fmt.Sprintf(`{"choices":[{"index":0,"delta":{"content":%q},"finish_reason":"stop"}]}`, f.name),
		`{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2}}`, "[DONE]")
}

// testPool is a pool of the replicas, probing every 10 ms unless opts
// say otherwise.
func testPool(t *testing.T, opts PoolOptions, replicas ...*fakeReplica) *Pool {
	var bases []string
	for _, r := range replicas {
		bases = append(bases, r.url())
	}
	if opts.ProbeInterval == 0 {
		opts.ProbeInterval, opts.ProbeMaxInterval = 10*time.Millisecond, 40*time.Millisecond
	}
	p := NewPool("m", Served{}, bases, opts)
	t.Cleanup(p.Close)
	return p
}

func hello(ctx context.Context, p *Pool, emit func(assistant.Delta) error) (string, error) {
	res, err := p.Generate(ctx, assistant.GenerateRequest{Model: "m", N: 1, Messages: []assistant.Message{{Role: "user", Content: "hi"}}}, emit)
	if err != nil {
		return "", err
	}
	return res.Choices[0].Text, nil
}

// waitFor polls cond until it holds or ten seconds passed.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Ten concurrent streams over two replicas go five and five: each request
// takes the replica with fewer in flight.
func TestPoolSpreadsLoad(t *testing.T) {
	a, b := newReplica(t, "a"), newReplica(t, "b")
	hold := make(chan struct{})
	a.hold, b.hold = hold, hold
	p := testPool(t, PoolOptions{}, a, b)
	var wg sync.WaitGroup
	errs := make(chan error, 10)
	for range 10 {
		wg.Go(func() {
			if _, err := hello(context.Background(), p, func(assistant.Delta) error { return nil }); err != nil {
				errs <- err
			}
		})
	}
	waitFor(t, "ten held streams", func() bool { return a.holding.Load()+b.holding.Load() == 10 })
	if a.holding.Load() != 5 || b.holding.Load() != 5 {
		t.Errorf("streams held by the replicas: %d and %d, want 5 and 5", a.holding.Load(), b.holding.Load())
	}
	for _, st := range p.Stats() {
		if st.InFlight != 5 || st.Requests != 5 || !st.Healthy {
			t.Errorf("stats %+v", st)
		}
	}
	close(hold)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, st := range p.Stats() {
		if st.InFlight != 0 {
			t.Errorf("after the streams: %+v", st)
		}
	}
}

// A replica that fails before answering loses the request to the other
// (a client sees the answer, not the failure) and leaves rotation;
// failures that are the request's own are answered as they are.
func TestPoolFailover(t *testing.T) {
	for _, tc := range []struct {
		mode     string
		failover bool
		down     bool
		reason   string // the failure's reason in the replica's stats
	}{
		{"killed", true, true, ReasonUnreachable},
		{"503", true, true, ReasonBusy},
		{"429", true, true, ReasonBusy},
		{"502", true, true, ReasonBadGateway},
		{"hang", true, true, ReasonTimeout}, // no headers within the client's timeout
		{"hung", true, true, ReasonTimeout}, // no model list within ModelsTimeout
		{"cut", true, false, ReasonStream},  // nothing reached the client: retried, but the server is not judged by one broken stream
		{"400", false, false, ""},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			a, b := newReplica(t, "a"), newReplica(t, "b")
			client := NewClient()
			if tc.mode == "hang" {
				// Long enough for b's answers on a loaded machine: the
				// client is both replicas'.
				client.Transport.(*http.Transport).ResponseHeaderTimeout = time.Second
			}
			// The probe must not bring a back while the test looks.
			p := testPool(t, PoolOptions{Client: client, ProbeInterval: time.Hour}, a, b)
			if tc.mode == "hung" {
				// Only where the timeout is what fails a: elsewhere a list
				// slower than this on a loaded machine would count as a
				// timeout instead of the failure under test.
				p.replicas[0].engine.ModelsTimeout = 300 * time.Millisecond
			}
			if tc.mode == "killed" {
				a.kill()
			} else {
				a.mode.Store(tc.mode)
			}
			// The first request goes to a, the first replica, both being idle.
			text, err := hello(context.Background(), p, nil)
			if !tc.failover {
				if err == nil || b.chats.Load() != 0 {
					t.Fatalf("got %q %v, b asked %d times; want a's error alone", text, err, b.chats.Load())
				}
				return
			}
			if err != nil || text != "from b" {
				t.Fatalf("got %q %v, want b's answer", text, err)
			}
			st := p.Stats()
			if st[0].Healthy == tc.down || st[0].Failures != 1 || st[0].FailuresBy[tc.reason] != 1 || st[1].Failures != 0 {
				t.Fatalf("stats %+v", st)
			}
			// Every request after it is answered, by b while a is out.
			for range 4 {
				if text, err := hello(context.Background(), p, nil); err != nil || (tc.down && text != "from b") {
					t.Fatalf("got %q %v", text, err)
				}
			}
		})
	}
}

// After the first delta reached the client a replica's failure ends the
// answer: a second replica's answer would repeat or contradict it.
func TestPoolNoFailoverMidStream(t *testing.T) {
	a, b := newReplica(t, "a"), newReplica(t, "b")
	a.mode.Store("cut")
	p := testPool(t, PoolOptions{}, a, b)
	var got strings.Builder
	_, err := hello(context.Background(), p, func(d assistant.Delta) error {
		got.WriteString(d.Text)
		return nil
	})
	if err == nil || got.String() != "Once" || b.chats.Load() != 0 {
		t.Fatalf("streamed %q, err %v, b asked %d times", got.String(), err, b.chats.Load())
	}
}

// A replica that was down rejoins once its probe finds it listening again,
// and the pool says so in its log, naming the replica without the
// credentials its URL carries.
func TestPoolRejoins(t *testing.T) {
	a, b := newReplica(t, "a"), newReplica(t, "b")
	var logs testenv.LogBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	p := NewPool("m", Served{}, []string{"http://user:s3cret@" + a.addr, b.url()},
		PoolOptions{Log: log, ProbeInterval: 10 * time.Millisecond, ProbeMaxInterval: 40 * time.Millisecond})
	t.Cleanup(p.Close)
	a.kill()
	if text, err := hello(context.Background(), p, nil); err != nil || text != "from b" {
		t.Fatalf("got %q %v", text, err)
	}
	if p.Stats()[0].Healthy {
		t.Fatal("a killed replica is still in rotation")
	}
	a.start(t)
	waitFor(t, "the restarted replica to rejoin", func() bool { return p.Stats()[0].Healthy })
	for range 4 {
		if _, err := hello(context.Background(), p, nil); err != nil {
			t.Fatal(err)
		}
	}
	if a.chats.Load() == 0 {
		t.Fatal("the rejoined replica got no requests")
	}
	out := logs.String()
	if !strings.Contains(out, "upstream replica down") || !strings.Contains(out, "upstream replica back") ||
		!strings.Contains(out, "replica="+a.addr) || strings.Contains(out, "s3cret") || strings.Contains(out, "user") {
		t.Fatalf("log:\n%s", out)
	}
	if got := Host("https://user:pw@gpu-1:8000/v1/?key=x#model=y"); got != "gpu-1:8000/v1" {
		t.Fatalf("Host = %q", got)
	}
}

// With every replica down, requests fail at once with ErrUnavailable
// (503), without a round trip; Close stops the probes.
func TestPoolAllDown(t *testing.T) {
	a, b := newReplica(t, "a"), newReplica(t, "b")
	// The pool's client counts what it sends: once the first request has
	// found both replicas down, later requests must not send anything to
	// them (and so cannot wait on a dial), which a count shows on a
	// machine of any speed where a time bound could not. The probes wait
	// an hour, so that none of theirs is counted.
	var sent atomic.Int64
	client := NewClient()
	t.Cleanup(client.CloseIdleConnections)
	client.Transport = requestCounter{client.Transport, &sent}
	p := testPool(t, PoolOptions{Client: client, ProbeInterval: time.Hour, ProbeMaxInterval: time.Hour}, a, b)
	a.kill()
	b.kill()
	for i := range 3 {
		before := sent.Load()
		_, err := hello(context.Background(), p, nil)
		if !errors.Is(err, assistant.ErrUnavailable) {
			t.Fatalf("request %d: %v, want ErrUnavailable", i, err)
		}
		if n := sent.Load() - before; i > 0 && n != 0 {
			t.Fatalf("request %d sent %d requests to replicas already found down", i, n)
		}
	}
	if n, err := p.CountTokens(context.Background(), "m", "four"); err != nil || n != 1 {
		t.Fatalf("count with every replica down: %d %v, want the estimate", n, err)
	}
	done := make(chan struct{})
	go func() { p.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not stop the probes")
	}
	// The probes' goroutines are gone, not merely told to stop (a
	// goroutine may still be returning when Close's wait ends).
	waitFor(t, "the probe goroutines to end", func() bool {
		buf := make([]byte, 1<<20)
		return !bytes.Contains(buf[:runtime.Stack(buf, true)], []byte("(*Pool).probe"))
	})
}

// requestCounter counts the requests that pass through it.
type requestCounter struct {
	base http.RoundTripper
	n    *atomic.Int64
}

func (c requestCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.base.RoundTrip(r)
}

// CloseIdleConnections reaches the transport below, as http.Client's does.
func (c requestCounter) CloseIdleConnections() {
	if t, ok := c.base.(interface{ CloseIdleConnections() }); ok {
		t.CloseIdleConnections()
	}
}

// A replica out of rotation for saying it is overloaded leaves its name
// busy, not gone: while no replica is in rotation and one of them is out
// for a 429 or 503, requests are ErrEngineBusy (429 with Retry-After,
// which clients retry), as a lone server's own 429 was; a server that
// cannot be reached is ErrUnavailable (503).
func TestPoolBusyIsNotUnavailable(t *testing.T) {
	for _, tc := range []struct {
		modes []string // each replica's failure: a status, or "killed"
		want  error
	}{
		{[]string{"429"}, assistant.ErrEngineBusy},
		{[]string{"503"}, assistant.ErrEngineBusy},
		{[]string{"429", "killed"}, assistant.ErrEngineBusy},
		{[]string{"killed"}, assistant.ErrUnavailable},
		{[]string{"502"}, assistant.ErrUnavailable},
	} {
		t.Run(strings.Join(tc.modes, ","), func(t *testing.T) {
			var rs []*fakeReplica
			for i, mode := range tc.modes {
				r := newReplica(t, fmt.Sprint(i))
				if mode == "killed" {
					r.kill()
				} else {
					r.mode.Store(mode)
				}
				rs = append(rs, r)
			}
			// No probe brings a replica back while the test looks.
			p := testPool(t, PoolOptions{ProbeInterval: time.Hour}, rs...)
			// The first requests meet the replicas and take them out.
			for range len(rs) {
				_, _ = hello(context.Background(), p, nil)
			}
			for _, st := range p.Stats() {
				if st.Healthy {
					t.Fatalf("replica %s still in rotation: %+v", st.Host, p.Stats())
				}
			}
			_, err := hello(context.Background(), p, nil)
			if !errors.Is(err, tc.want) {
				t.Fatalf("with no replica in rotation: %v, want %v", err, tc.want)
			}
			if _, err := p.Models(context.Background()); !errors.Is(err, tc.want) {
				t.Fatalf("model list with no replica in rotation: %v, want %v", err, tc.want)
			}
		})
	}
}

// Each replica clamps max_tokens to its own window: two llama-servers of
// 64 and 128 tokens behind one name, "hi\n" taking 3 tokens.
func TestPoolPerReplicaWindow(t *testing.T) {
	a, b := newReplica(t, "a"), newReplica(t, "b")
	a.window, b.window = 64, 128
	p := testPool(t, PoolOptions{}, a, b)
	for range 4 {
		_, err := p.Generate(context.Background(), assistant.GenerateRequest{Model: "m", N: 1, MaxTokens: 999_999_999,
			Messages: []assistant.Message{{Role: "user", Content: "hi"}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
	}
	a.mu.Lock()
	b.mu.Lock()
	defer a.mu.Unlock()
	defer b.mu.Unlock()
	if fmt.Sprint(a.maxTokens) != "[61 61]" || fmt.Sprint(b.maxTokens) != "[125 125]" {
		t.Fatalf("max_tokens sent: a %v, b %v", a.maxTokens, b.maxTokens)
	}
}

// A vLLM and a llama-server behind one name are each asked to count in
// their own /tokenize shape, and the model list names the smaller window.
func TestPoolPerReplicaTokenizer(t *testing.T) {
	v := &fakeVLLM{window: 50, listLen: true}
	var vShapes []string
	var mu sync.Mutex
	vllm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/tokenize" {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			vShapes = append(vShapes, map[bool]string{true: "prompt", false: "content"}[bytes.Contains(b, []byte(`"prompt"`))])
			mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
		v.ServeHTTP(w, r)
	}))
	t.Cleanup(vllm.Close)
	llama := newReplica(t, "llama")
	p := NewPool("m", Served{}, []string{vllm.URL, llama.url()}, PoolOptions{})
	t.Cleanup(p.Close)
	if _, err := p.Models(context.Background()); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		if n, err := p.CountTokens(context.Background(), "m", "one two three"); err != nil || (n != 3 && n != 13) {
			t.Fatalf("count %d %v", n, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	llama.mu.Lock()
	defer llama.mu.Unlock()
	if fmt.Sprint(vShapes) != "[prompt prompt]" || fmt.Sprint(llama.shapes) != "[content content]" {
		t.Fatalf("tokenize shapes: vLLM %v, llama-server %v", vShapes, llama.shapes)
	}

	// Two vLLMs of 50 and 80 tokens: the list names 50.
	w := httptest.NewServer(&fakeVLLM{window: 80, listLen: true})
	t.Cleanup(w.Close)
	p2 := NewPool("m", Served{}, []string{w.URL, vllm.URL}, PoolOptions{})
	t.Cleanup(p2.Close)
	ms, err := p2.Models(context.Background())
	if err != nil || len(ms) != 1 || ms[0].ContextWindow != 50 {
		t.Fatalf("models %+v %v", ms, err)
	}
}

// An embedder pool fails over as a chat pool does; a chat pool does not
// embed.
func TestPoolEmbed(t *testing.T) {
	a, b := newReplica(t, "a"), newReplica(t, "bb")
	p := NewPool("e", Served{Type: assistant.TypeEmbedder}, []string{a.url(), b.url()},
		PoolOptions{ProbeInterval: time.Hour})
	t.Cleanup(p.Close)
	a.kill()
	for range 3 {
		embs, err := p.Embed(context.Background(), "e", []string{"x", "y"})
		if err != nil || len(embs) != 2 || embs[0].Vector[0] != 2 {
			t.Fatalf("%+v %v", embs, err)
		}
	}
	chat := testPool(t, PoolOptions{}, b)
	if _, err := chat.Embed(context.Background(), "m", []string{"x"}); !errors.Is(err, assistant.ErrNotEmbedder) {
		t.Fatalf("a chat pool embedded: %v", err)
	}
}
