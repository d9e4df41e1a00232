package kernels

import (
	"math/rand/v2"
	"runtime"
	"testing"

	"partnerapi/internal/inference/gguf"
)

// TestPrefetchCursorShares checks that the participants' cursors cover
// their shares of a hint (capped at prefetchShareMax) one prefetchStep at
// a time, that a cursor interrupted by stop resumes where it was, and that
// a new hint restarts it.
func TestPrefetchCursorShares(t *testing.T) {
	if !tilePacked || !prefetchAvailable {
		t.Skip("no packed kernels or no prefetch in this build")
	}
	r := rand.New(rand.NewPCG(1, 2))
	a := Pack(Matrix{Type: gguf.Q8_0, Rows: 48, Cols: 64, Data: randomRow(r, gguf.Q8_0, 48*64)})
	b := Pack(Matrix{Type: gguf.Q4_0, Rows: 1600, Cols: 576, Data: randomRow(r, gguf.Q4_0, 1600*576)})
	h := NewPrefetchHint(a, b, Matrix{Type: gguf.F32, Rows: 2, Cols: 2, Data: make([]byte, 16)})
	if len(h.spans) != 2 || h.total != len(a.packed)+len(b.packed) {
		t.Fatalf("hint spans %d, total %d; want the two packed matrices", len(h.spans), h.total)
	}
	for np := 1; np <= 3; np++ {
		for self := range np {
			var c prefetchCursor
			want := min((self+1)*h.total/np-self*h.total/np, prefetchShareMax)
			steps := 0
			for {
				before := c.done
				c.run(h.weak, self, np, func() bool { return true }) // one step per call
				if c.done == before {
					break
				}
				steps++
			}
			if c.done != want {
				t.Errorf("np %d self %d: prefetched %d bytes, want %d", np, self, c.done, want)
			}
			if wantSteps := (want + prefetchStep - 1) / prefetchStep; steps != wantSteps {
				t.Errorf("np %d self %d: %d steps, want %d", np, self, steps, wantSteps)
			}
			c.run(NewPrefetchHint(a).weak, self, np, func() bool { return false })
			if w := min((self+1)*len(a.packed)/np-self*len(a.packed)/np, prefetchShareMax); c.done != w {
				t.Errorf("np %d self %d: new hint prefetched %d bytes, want %d", np, self, c.done, w)
			}
		}
	}
}

// TestPrefetchCursorChain checks that a cursor goes on from its share of a
// hint to its share of the hint chained after it (Then), within one
// budget of prefetchShareMax bytes, and stops at the first hint when
// chaining is off.
func TestPrefetchCursorChain(t *testing.T) {
	if !tilePacked || !prefetchAvailable {
		t.Skip("no packed kernels or no prefetch in this build")
	}
	defer SetPrefetchChain(true)
	r := rand.New(rand.NewPCG(7, 8))
	small := NewPrefetchHint(Pack(Matrix{Type: gguf.Q8_0, Rows: 64, Cols: 576, Data: randomRow(r, gguf.Q8_0, 64*576)}))
	big := NewPrefetchHint(Pack(Matrix{Type: gguf.Q8_0, Rows: 2048, Cols: 576, Data: randomRow(r, gguf.Q8_0, 2048*576)}))
	h := small.Then(big)
	for _, chain := range []bool{true, false} {
		SetPrefetchChain(chain)
		for self := range 2 {
			var c prefetchCursor
			c.run(h.weak, self, 2, func() bool { return false })
			want := (self+1)*small.total/2 - self*small.total/2
			if chain {
				want = min(want+(self+1)*big.total/2-self*big.total/2, prefetchShareMax)
			}
			if c.done != want {
				t.Errorf("chain %v self %d: prefetched %d bytes, want %d", chain, self, c.done, want)
			}
		}
	}
}

// TestPrefetchHintDoesNotKeepWeights checks that announcing a hint does
// not keep its weights alive once its owner drops it.
func TestPrefetchHintDoesNotKeepWeights(t *testing.T) {
	if !tilePacked {
		t.Skip("no packed kernels in this build")
	}
	defer Prefetch(nil)
	r := rand.New(rand.NewPCG(5, 6))
	h := NewPrefetchHint(Pack(Matrix{Type: gguf.Q8_0, Rows: 32, Cols: 64, Data: randomRow(r, gguf.Q8_0, 32*64)}))
	w := h.weak
	Prefetch(h)
	h = nil
	for range 5 {
		runtime.GC()
		if w.Value() == nil {
			return
		}
	}
	t.Fatal("the announced hint is still alive after its owner dropped it")
}

// BenchmarkPrefetch is the rate at which one core issues the prefetches of
// a hint's share of weights in memory (the matrices are larger than the
// caches). Prefetches retire without waiting for their lines, so this is
// the issue rate, above what memory delivers to one core.
func BenchmarkPrefetch(b *testing.B) {
	if !tilePacked || !prefetchAvailable {
		b.Skip("no packed kernels or no prefetch in this build")
	}
	r := rand.New(rand.NewPCG(3, 4))
	var hints []*PrefetchHint
	for range 64 {
		hints = append(hints, NewPrefetchHint(Pack(Matrix{Type: gguf.Q8_0, Rows: 1536, Cols: 576, Data: randomRow(r, gguf.Q8_0, 1536*576)})))
	}
	var c prefetchCursor
	i := 0
	for b.Loop() {
		c.run(hints[i%len(hints)].weak, 0, 1, func() bool { return false })
		i++
	}
	b.SetBytes(int64(prefetchShareMax))
}
