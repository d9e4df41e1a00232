package upstream

import (
	"sync"
	"time"

	"partnerapi/internal/assistant"
	"partnerapi/internal/ttft"
)

// An operator sizing the upstreams needs what the embedded engine's
// metrics tell of it (inference reference §10: time to first token,
// tokens per second, prompt and completion token counters), for the
// models an upstream serves too; its server's own /metrics, where it has
// one (Ollama has none), knows nothing of the time a request waited here.
// A pool therefore measures its chats itself.

// ChatStats is what a pool's chats produced, for metrics.
type ChatStats struct {
	// TimeToFirstToken is the time from a chat reaching the pool (its
	// wait for a replica under MaxInFlight included) to its first text.
	TimeToFirstToken ttft.Histogram
	// PromptTokens and CompletionTokens add up the chats' usage, chats
	// cut short or failed after generating included.
	PromptTokens, CompletionTokens int64
}

// chatMetrics accumulates ChatStats; safe for concurrent use.
type chatMetrics struct {
	ttft               ttft.Recorder
	mu                 sync.Mutex
	prompt, completion int64
}

func (m *chatMetrics) firstToken(d time.Duration) { m.ttft.Observe(d) }

func (m *chatMetrics) used(u assistant.Usage) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.prompt += int64(max(u.PromptTokens, 0))
	m.completion += int64(max(u.CompletionTokens, 0))
}

func (m *chatMetrics) snapshot() ChatStats {
	h := m.ttft.Snapshot()
	m.mu.Lock()
	defer m.mu.Unlock()
	return ChatStats{TimeToFirstToken: h, PromptTokens: m.prompt, CompletionTokens: m.completion}
}

// ChatStats reports what the pool's chats produced so far.
func (p *Pool) ChatStats() ChatStats { return p.chats.snapshot() }
