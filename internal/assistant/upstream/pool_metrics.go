package upstream

import (
	"sync"
	"time"

	"partnerapi/internal/assistant"
)

// An operator sizing the upstreams needs what the embedded engine's
// metrics tell of it (inference reference §10: time to first token,
// tokens per second, prompt and completion token counters), for the
// models an upstream serves too; its server's own /metrics, where it has
// one (Ollama has none), knows nothing of the time a request waited here.
// A pool therefore measures its chats itself.

// TTFTBuckets are the upper bounds, in seconds, of the time-to-first-token
// histogram, the embedded engine's (local.TTFTBuckets).
var TTFTBuckets = []float64{0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// Histogram is a snapshot of a histogram in Prometheus's form.
type Histogram struct {
	Count   uint64
	Sum     float64            // seconds
	Buckets map[float64]uint64 // upper bound → observations at or below it
}

// ChatStats is what a pool's chats produced, for metrics.
type ChatStats struct {
	// TimeToFirstToken is the time from a chat reaching the pool (its
	// wait for a replica under MaxInFlight included) to its first text.
	TimeToFirstToken Histogram
	// PromptTokens and CompletionTokens add up the chats' usage, chats
	// cut short or failed after generating included.
	PromptTokens, CompletionTokens int64
}

// chatMetrics accumulates ChatStats; safe for concurrent use.
type chatMetrics struct {
	mu                 sync.Mutex
	counts             []uint64 // per bucket, not cumulative
	count              uint64
	sum                float64
	prompt, completion int64
}

func (m *chatMetrics) firstToken(d time.Duration) {
	s := d.Seconds()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.count++
	m.sum += s
	if m.counts == nil {
		m.counts = make([]uint64, len(TTFTBuckets))
	}
	for i, le := range TTFTBuckets {
		if s <= le {
			m.counts[i]++
			return
		}
	}
}

func (m *chatMetrics) used(u assistant.Usage) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.prompt += int64(max(u.PromptTokens, 0))
	m.completion += int64(max(u.CompletionTokens, 0))
}

func (m *chatMetrics) snapshot() ChatStats {
	m.mu.Lock()
	defer m.mu.Unlock()
	h := Histogram{Count: m.count, Sum: m.sum, Buckets: make(map[float64]uint64, len(TTFTBuckets))}
	var cum uint64
	for i, le := range TTFTBuckets {
		if m.counts != nil {
			cum += m.counts[i]
		}
		h.Buckets[le] = cum
	}
	return ChatStats{TimeToFirstToken: h, PromptTokens: m.prompt, CompletionTokens: m.completion}
}

// ChatStats reports what the pool's chats produced so far.
func (p *Pool) ChatStats() ChatStats { return p.chats.snapshot() }
