package upstream

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"partnerapi/internal/assistant"
)

func TestModelsCache(t *testing.T) {
	var calls atomic.Int32
	var fail atomic.Bool
	e := fake(t, func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if fail.Load() {
			http.Error(w, "down", http.StatusBadGateway)
			return
		}
		fmt.Fprint(w, `{"data":[{"id":"m"}]}`)
	})
	e.ModelsTTL = 50 * time.Millisecond
	start := time.Now()
	for range 3 {
		if ms, err := e.Models(context.Background()); err != nil || len(ms) != 1 {
			t.Fatal(ms, err)
		}
	}
	// The list was cached after start, so the three lists fell within its
	// TTL for sure only if less than the TTL has passed since start; a
	// loaded machine may take longer, and then a second fetch is right.
	if within := time.Since(start) < e.ModelsTTL; calls.Load() != 1 && within {
		t.Fatalf("%d upstream calls for 3 lists within the TTL, want 1", calls.Load())
	}
	calls.Store(1) // the counts below go on from one fetch either way
	time.Sleep(60 * time.Millisecond)
	fail.Store(true)
	if _, err := e.Models(context.Background()); err == nil || calls.Load() != 2 {
		t.Fatalf("after the TTL: err %v, %d calls", err, calls.Load())
	}
	fail.Store(false)
	if _, err := e.Models(context.Background()); err != nil || calls.Load() != 3 {
		t.Fatalf("a failure is not cached: err %v, %d calls", err, calls.Load())
	}
}

func TestModelsTimeout(t *testing.T) {
	release := make(chan struct{})
	e := fake(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	e.ModelsTimeout = 50 * time.Millisecond
	start := time.Now()
	if _, err := e.Models(context.Background()); err == nil {
		t.Fatal("a hanging upstream listed models")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Models took %v with a 50ms timeout", d)
	}
}

// BenchmarkChatRequest measures what one non-streamed chat costs the
// upstream engine as the service drives it (resolve the model, then
// generate) against a loopback fake, with the model list fetched on every
// request (TTL 0, as before the cache) and reused (the default TTL). Both
// run interleaved in one benchmark so machine noise hits them alike; the
// ratio is reported as a metric.
func BenchmarkChatRequest(b *testing.B) {
	e := fake(b, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			fmt.Fprint(w, `{"data":[{"id":"m"}]}`)
			return
		}
		sse(w, `{"choices":[{"index":0,"delta":{"content":"Hello."},"finish_reason":"stop"}]}`, `{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2}}`, "[DONE]")
	})
	req := assistant.GenerateRequest{Model: "m", N: 1, Messages: []assistant.Message{{Role: "user", Content: "hi"}}}
	one := func(ttl time.Duration) time.Duration {
		e.ModelsTTL = ttl
		start := time.Now()
		if _, err := e.Models(context.Background()); err != nil {
			b.Fatal(err)
		}
		if _, err := e.Generate(context.Background(), req, nil); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	var uncached, cached time.Duration
	for i := 0; i < b.N; i++ {
		uncached += one(0)
		cached += one(DefaultModelsTTL)
	}
	b.ReportMetric(float64(uncached.Nanoseconds())/float64(b.N), "ns/req-uncached")
	b.ReportMetric(float64(cached.Nanoseconds())/float64(b.N), "ns/req-cached")
	b.ReportMetric(float64(uncached)/float64(cached), "speedup")
}
