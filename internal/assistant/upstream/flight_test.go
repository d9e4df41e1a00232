package upstream

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"partnerapi/internal/assistant"
)

// listServer is a server whose GET /v1/models is counted and can be made
// slow (delay), fail with a status, or hang until the client gives up.
type listServer struct {
	lists  atomic.Int32
	delay  time.Duration
	status atomic.Int32 // 0: 200
	hang   atomic.Bool
	gate   chan struct{} // when set before the first request, lists wait for it to close
	srv    *httptest.Server
}

func newListServer(t *testing.T, delay time.Duration) *listServer {
	s := &listServer{delay: delay}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" {
			http.NotFound(w, r)
			return
		}
		s.lists.Add(1)
		if s.hang.Load() {
			<-r.Context().Done()
			return
		}
		if s.gate != nil {
			<-s.gate
		}
		time.Sleep(s.delay)
		if st := s.status.Load(); st != 0 {
			http.Error(w, `{"error":{"message":"refused"}}`, int(st))
			return
		}
		fmt.Fprint(w, `{"object":"list","data":[{"id":"m","object":"model","owned_by":"llamacpp"}]}`)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// together runs f n times at once, released together, and waits for all.
func together(n int, f func()) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range n {
		wg.Go(func() {
			<-start
			f()
		})
	}
	close(start)
	wg.Wait()
}

// When the cached model list has expired, 50 requests resolving their
// model at once cost one GET /v1/models per server, not 50: the engine
// merges its fetches, and so does a pool its rounds over the replicas.
func TestModelsFetchesMerged(t *testing.T) {
	for _, tc := range []struct {
		name     string
		replicas int
	}{{"engine", 0}, {"pool of one", 1}, {"pool of two", 2}} {
		t.Run(tc.name, func(t *testing.T) {
			var servers []*listServer
			var models func(context.Context) ([]assistant.ModelInfo, error)
			var engines []*Engine
			if tc.replicas == 0 {
				s := newListServer(t, 100*time.Millisecond)
				servers = append(servers, s)
				e := New(s.srv.URL, nil)
				engines, models = append(engines, e), e.Models
			} else {
				var bases []string
				for range tc.replicas {
					s := newListServer(t, 100*time.Millisecond)
					servers, bases = append(servers, s), append(bases, s.srv.URL)
				}
				p := NewPool("m", Served{}, bases, PoolOptions{})
				t.Cleanup(p.Close)
				for _, r := range p.replicas {
					engines = append(engines, r.engine)
				}
				models = p.Models
			}
			for _, e := range engines {
				e.ModelsTTL = 300 * time.Millisecond
			}
			if _, err := models(context.Background()); err != nil {
				t.Fatal(err)
			}
			time.Sleep(350 * time.Millisecond) // the list expires
			var failed atomic.Int32
			together(50, func() {
				ms, err := models(context.Background())
				if err != nil || len(ms) != 1 || ms[0].Name != "m" {
					failed.Add(1)
				}
			})
			if failed.Load() != 0 {
				t.Fatalf("%d of 50 callers got no list", failed.Load())
			}
			for i, s := range servers {
				if n := s.lists.Load(); n != 2 {
					t.Errorf("server %d answered %d model lists, want 2 (the first and one for the 50 callers)", i, n)
				}
			}
		})
	}
}

// A caller that gives up while the shared fetch is under way gets its own
// context's error at once; the others still get the list, which is
// cached.
func TestModelsFetchOutlivesItsCaller(t *testing.T) {
	// The list is held until the caller that gives up has returned, so
	// that it returned at all shows it did not wait for the fetch, however
	// slowly a loaded machine runs the test.
	s := newListServer(t, 0)
	s.gate = make(chan struct{})
	var opened sync.Once
	open := func() { opened.Do(func() { close(s.gate) }) }
	t.Cleanup(open) // before the server's Close, which waits for the handler
	e := New(s.srv.URL, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	var wg sync.WaitGroup
	var other error
	wg.Go(func() {
		time.Sleep(5 * time.Millisecond) // joins the fetch the first caller started
		_, other = e.Models(context.Background())
	})
	if _, err := e.Models(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the caller that gave up: %v", err)
	}
	open()
	wg.Wait()
	if other != nil {
		t.Fatalf("the caller that waited: %v", other)
	}
	if _, err := e.Models(context.Background()); err != nil || s.lists.Load() != 1 {
		t.Fatalf("after: %v, %d lists, want the cached one", err, s.lists.Load())
	}
}

// A replica whose model list fails in a way that takes it out of rotation
// counts as failing, under the reason a chat failing the same way counts
// under, and once for a round of lists that 50 callers shared.
func TestPoolModelsFailureCounted(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fail   func(*listServer)
		reason string
	}{
		{"no list within the timeout", func(s *listServer) { s.hang.Store(true) }, ReasonTimeout},
		{"503", func(s *listServer) { s.status.Store(503) }, ReasonBusy},
		{"429", func(s *listServer) { s.status.Store(429) }, ReasonBusy},
		{"502", func(s *listServer) { s.status.Store(502) }, ReasonBadGateway},
		{"504", func(s *listServer) { s.status.Store(504) }, ReasonBadGateway},
		{"refused", func(s *listServer) { s.srv.Close() }, ReasonUnreachable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := newListServer(t, 0), newListServer(t, 0)
			p := NewPool("m", Served{}, []string{a.srv.URL, b.srv.URL}, PoolOptions{ProbeInterval: time.Hour})
			t.Cleanup(p.Close)
			if tc.reason == ReasonTimeout {
				// Only where the timeout is what fails a: elsewhere a list
				// slower than this on a loaded machine would count as a
				// timeout instead of the failure under test.
				p.replicas[0].engine.ModelsTimeout = 200 * time.Millisecond
			}
			tc.fail(a)
			together(50, func() {
				if ms, err := p.Models(context.Background()); err != nil || len(ms) != 1 {
					t.Errorf("the list: %v %v, want b's", ms, err)
				}
			})
			st := p.Stats()
			if st[0].Healthy || st[0].Failures != 1 || st[0].FailuresBy[tc.reason] != 1 || st[1].Failures != 0 {
				t.Fatalf("stats %+v, want replica 0 out of rotation with one %s failure", st, tc.reason)
			}
			for _, reason := range FailureReasons {
				if _, ok := st[0].FailuresBy[reason]; !ok {
					t.Errorf("FailuresBy lacks %s: %v", reason, st[0].FailuresBy)
				}
			}
		})
	}
}
