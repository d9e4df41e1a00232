// Package ttft counts times to first token into the histogram that both
// engines, the embedded one and the OpenAI-compatible upstreams, report on
// /metrics. One package holds it so that the two histograms share their
// buckets and can be compared or summed by a dashboard; it imports no
// metrics library, so the engines stay free of one and the wiring in cmd
// turns a snapshot into a Prometheus constant histogram.
package ttft

import (
	"sync"
	"time"
)

// Buckets are the upper bounds, in seconds, of the histogram: from a
// prefix-cache hit on a small model (tens of milliseconds) to a long prompt
// queued behind a full batch on a large one (a minute).
var Buckets = []float64{0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// Histogram is a snapshot of a histogram in Prometheus's form.
type Histogram struct {
	Count   uint64
	Sum     float64            // seconds
	Buckets map[float64]uint64 // upper bound → observations at or below it
}

// Recorder counts durations into Buckets; its zero value is ready and it is
// safe for concurrent use.
type Recorder struct {
	mu     sync.Mutex
	counts []uint64 // per bucket, not cumulative; made on first use
	count  uint64
	sum    float64
}

// Observe records one time to first token.
func (r *Recorder) Observe(d time.Duration) {
	s := d.Seconds()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.count++
	r.sum += s
	if r.counts == nil {
		r.counts = make([]uint64, len(Buckets))
	}
	for i, le := range Buckets {
		if s <= le {
			r.counts[i]++
			return
		}
	}
}

// Snapshot returns what has been recorded so far, with cumulative buckets.
func (r *Recorder) Snapshot() Histogram {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := Histogram{Count: r.count, Sum: r.sum, Buckets: make(map[float64]uint64, len(Buckets))}
	var cum uint64
	for i, le := range Buckets {
		if r.counts != nil {
			cum += r.counts[i]
		}
		out.Buckets[le] = cum
	}
	return out
}
