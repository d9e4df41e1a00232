package assistant

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type namedEngine struct {
	name   string
	models []string
}

func (n namedEngine) Models(context.Context) ([]ModelInfo, error) {
	var out []ModelInfo
	for _, m := range n.models {
		out = append(out, ModelInfo{Name: m, OwnedBy: n.name})
	}
	return out, nil
}
func (n namedEngine) CountTokens(context.Context, string, string) (int, error) {
	return len(n.name), nil
}
func (n namedEngine) Generate(context.Context, GenerateRequest, func(Delta) error) (Result, error) {
	return Result{Choices: []Choice{{Text: n.name}}}, nil
}

func TestMultiEngine(t *testing.T) {
	m := &MultiEngine{Default: namedEngine{"local", []string{"a", "b"}}, Routes: map[string]Engine{"b": namedEngine{"up", []string{"b"}}}}
	for _, tc := range []struct{ model, want string }{{"a", "local"}, {"b", "up"}, {"zz", "local"}} {
		r, _ := m.Generate(context.Background(), GenerateRequest{Model: tc.model}, nil)
		if r.Choices[0].Text != tc.want {
			t.Errorf("%s routed to %s, want %s", tc.model, r.Choices[0].Text, tc.want)
		}
	}
	ms, _ := m.Models(context.Background())
	if len(ms) != 2 || ms[0].OwnedBy != "local" || ms[1].OwnedBy != "up" {
		t.Fatalf("models %+v", ms)
	}
}

// stalledEngine is an upstream whose server does not answer its model
// list: Models waits until its caller gives up, counting the calls and
// how many wait at once.
type stalledEngine struct {
	namedEngine
	calls, waiting atomic.Int32
	both           chan struct{} // closed when two calls wait at once
	once           sync.Once
}

func (s *stalledEngine) Models(ctx context.Context) ([]ModelInfo, error) {
	s.calls.Add(1)
	if s.waiting.Add(1) == 2 {
		s.once.Do(func() { close(s.both) })
	}
	defer s.waiting.Add(-1)
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestResolveModelAsksOnlyItsEngine: resolving a local model does not ask
// an upstream for its list. Asking every engine, a chat with a local model
// waited for an upstream server that hung, up to its model-list timeout.
func TestResolveModelAsksOnlyItsEngine(t *testing.T) {
	up := &stalledEngine{namedEngine: namedEngine{"up", []string{"u"}}, both: make(chan struct{})}
	m := &MultiEngine{Default: namedEngine{"local", []string{"a"}}, Routes: map[string]Engine{"u": up}}
	svc := &Service{engine: m}
	// The bound only keeps a regression from hanging the test: an engine
	// that asks the upstream waits for it and then counts below.
	bounded, stop := context.WithTimeout(context.Background(), time.Second)
	defer stop()
	for _, id := range []string{"a", "a:latest"} {
		mi, err := svc.ResolveModel(bounded, id)
		if err != nil || mi.Name != "a" {
			t.Fatalf("ResolveModel(%q) = %+v, %v", id, mi, err)
		}
	}
	if _, err := svc.ResolveModel(bounded, "u-typo"); err != ErrNoSuchModel {
		t.Fatalf("an unknown model: %v", err)
	}
	if n := up.calls.Load(); n != 0 {
		t.Errorf("resolving local models asked the upstream %d times", n)
	}
	// A routed model still resolves while its server does not answer.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if mi, err := svc.ResolveModel(ctx, "u"); err != nil || mi.Name != "u" {
		t.Fatalf("ResolveModel(u) with its server silent = %+v, %v", mi, err)
	}
}

// TestMultiEngineListsUpstreamsAtOnce: /models asks every upstream at
// once, so two that hang cost one model-list timeout, not two. Asked one
// after another, the second call never starts while the first waits.
func TestMultiEngineListsUpstreamsAtOnce(t *testing.T) {
	both := make(chan struct{})
	up1 := &stalledEngine{namedEngine: namedEngine{"up1", []string{"u1"}}, both: both}
	// Both count into the first's waiting counter, so it sees two at once.
	m := &MultiEngine{Default: namedEngine{"local", []string{"a"}}, Routes: map[string]Engine{"u1": up1, "u2": sharedWait{up1}}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan []ModelInfo, 1)
	go func() { ms, _ := m.Models(ctx); done <- ms }()
	select {
	case <-both:
	case <-time.After(5 * time.Second):
		t.Error("the second upstream was not asked while the first waited")
	}
	cancel()
	ms := <-done
	if len(ms) != 3 || ms[1].Name != "u1" || ms[2].Name != "u2" {
		t.Fatalf("models %+v", ms)
	}
}

// sharedWait is a second route over the same stalled server.
type sharedWait struct{ *stalledEngine }
