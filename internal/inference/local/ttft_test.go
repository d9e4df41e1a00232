package local

import (
	"context"
	"testing"
	"time"

	"partnerapi/internal/assistant"
)

func TestLatencyHistogram(t *testing.T) {
	tests := []struct {
		name    string
		observe []time.Duration
		count   uint64
		sum     float64
		buckets map[float64]uint64 // some of the cumulative buckets
	}{
		{"empty", nil, 0, 0, map[float64]uint64{0.025: 0, 60: 0}},
		{"one fast", []time.Duration{10 * time.Millisecond}, 1, 0.01, map[float64]uint64{0.025: 1, 0.05: 1, 60: 1}},
		{"on a bound", []time.Duration{100 * time.Millisecond}, 1, 0.1, map[float64]uint64{0.05: 0, 0.1: 1}},
		{"spread", []time.Duration{30 * time.Millisecond, 2 * time.Second, 2 * time.Minute}, 3, 122.03,
			map[float64]uint64{0.025: 0, 0.05: 1, 1: 1, 2.5: 2, 60: 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var h latencyHistogram
			for _, d := range tc.observe {
				h.observe(d)
			}
			got := h.snapshot()
			if got.Count != tc.count || got.Sum < tc.sum-1e-9 || got.Sum > tc.sum+1e-9 {
				t.Errorf("count %d sum %v, want %d %v", got.Count, got.Sum, tc.count, tc.sum)
			}
			if len(got.Buckets) != len(TTFTBuckets) {
				t.Errorf("%d buckets", len(got.Buckets))
			}
			for le, want := range tc.buckets {
				if got.Buckets[le] != want {
					t.Errorf("bucket le=%v: %d, want %d", le, got.Buckets[le], want)
				}
			}
		})
	}
}

// TestGenerateRecordsTimeToFirstToken checks that every answered call is
// one observation of its model's histogram, and a refused one none.
func TestGenerateRecordsTimeToFirstToken(t *testing.T) {
	e := openEngine(t, "", Options{})
	for range 2 {
		if _, err := e.Generate(context.Background(), assistant.GenerateRequest{Model: "stories260K", Messages: userMessage("Once upon a time"), MaxTokens: 3, N: 2}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.Generate(context.Background(), assistant.GenerateRequest{Model: "stories260K", Messages: userMessage("x"), MaxTokens: 3}, nil); err != nil {
		t.Fatal(err)
	}
	e.models["stories260K"].info.ContextWindow = 1
	if _, err := e.Generate(context.Background(), assistant.GenerateRequest{Model: "stories260K", Messages: userMessage("Once upon a time")}, nil); err == nil {
		t.Fatal("a prompt over the window was accepted")
	}
	h := e.Stats()[0].TimeToFirstToken
	if h.Count != 3 || h.Sum <= 0 || h.Buckets[60] != 3 {
		t.Errorf("histogram %+v, want 3 observations", h)
	}
}
