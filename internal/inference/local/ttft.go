package local

import (
	"sync"
	"time"
)

// TTFTBuckets are the upper bounds, in seconds, of the time-to-first-token
// histogram: from a prefix-cache hit on a small model (tens of
// milliseconds) to a long prompt queued behind a full batch on a large one
// (a minute).
var TTFTBuckets = []float64{0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// Histogram is a snapshot of a histogram in Prometheus's form.
type Histogram struct {
	Count   uint64
	Sum     float64            // seconds
	Buckets map[float64]uint64 // upper bound → observations at or below it
}

// latencyHistogram counts durations into TTFTBuckets; safe for concurrent
// use.
type latencyHistogram struct {
	mu     sync.Mutex
	counts []uint64 // per bucket, not cumulative; made on first use
	count  uint64
	sum    float64
}

func (h *latencyHistogram) observe(d time.Duration) {
	s := d.Seconds()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.count++
	h.sum += s
	if h.counts == nil {
		h.counts = make([]uint64, len(TTFTBuckets))
	}
	for i, le := range TTFTBuckets {
		if s <= le {
			h.counts[i]++
			return
		}
	}
}

func (h *latencyHistogram) snapshot() Histogram {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := Histogram{Count: h.count, Sum: h.sum, Buckets: make(map[float64]uint64, len(TTFTBuckets))}
	var cum uint64
	for i, le := range TTFTBuckets {
		if h.counts != nil {
			cum += h.counts[i]
		}
		out.Buckets[le] = cum
	}
	return out
}
