package kernels

import (
	"sync/atomic"
	"weak"
)

// Prefetching the next product's weights while a core is idle.
//
// A single-stream decode step of a small model (SmolLM2-135M: some 210
// products of a few hundred kilobytes each) leaves the memory bus idle
// whenever no product runs: while the caller normalises, quantises, rotates
// and attends on its own, the other core spins, and whichever core finishes
// its share of a product first spins until the other is done. The next
// product then starts from DRAM with the hardware prefetcher still cold.
// The caller of the engine knows which weights come next, so it names them
// with Prefetch before it starts the current product; any participant of
// the pool that would otherwise spin prefetches its share of those weights
// into its caches (the L2 holds 1 MB a core, and lines evicted from it stay
// in the L3), and the product that follows finds them there. A lone 135M
// sequence decoded 2–7 % faster (median of interleaved blocks about 4 %,
// BenchmarkPrefetchSideBySide135M on a busy shared host).
//
// Prefetching changes no result: it only reads weight bytes. Only builds
// with the assembly (prefetch_amd64.s) prefetch at all; the portable
// kernels are compute-bound and have no packed weights to name.

// PrefetchHint is the weights of one product (or of several products
// computed in one parallel region, like MatMulMany's), made once by
// NewPrefetchHint and announced before each step with Prefetch.
type PrefetchHint struct {
	spans [][]byte // the bytes the product kernels read, in split order
	total int
	// weak is what the pool holds of the last hint announced: the pool
	// lives as long as the process, and a strong pointer would keep the
	// last model's weights (a hundred megabytes and more) alive after the
	// model is dropped.
	weak *weak.Pointer[PrefetchHint]
	// next is read, within the same budget, once this hint's share is
	// done (Then).
	next *PrefetchHint
}

// Then returns a hint that names h's weights and then next's: a
// participant that finishes its share of h before the region begins goes
// on with its share of next.
func (h *PrefetchHint) Then(next *PrefetchHint) *PrefetchHint {
	t := &PrefetchHint{spans: h.spans, total: h.total, weak: new(weak.Pointer[PrefetchHint]), next: next}
	*t.weak = weak.Make(t)
	return t
}

// prefetchChainOff stops prefetching at the end of the first hint of a
// chain (SetPrefetchChain).
var prefetchChainOff atomic.Bool

// SetPrefetchChain turns Then's continuation on or off (it is on by
// default), for benchmarks that compare the two.
func SetPrefetchChain(on bool) { prefetchChainOff.Store(!on) }

// NewPrefetchHint returns a hint for the weights of ms, in the order a
// MatMulMany over ms splits them between participants (as one index space
// of rows, so the concatenated weights split by bytes). Only packed
// weights (Pack) are named: they live on the Go heap, which the hint keeps
// alive while a participant reads it, whereas other weights may be a file
// mapping that the model's owner unmaps when it closes the model, while a
// worker might still be reading the last hint announced. Packed weights
// are what the single-stream AVX-512 and AVX2 paths read anyway.
func NewPrefetchHint(ms ...Matrix) *PrefetchHint {
	h := &PrefetchHint{weak: new(weak.Pointer[PrefetchHint])}
	for _, m := range ms {
		if m.packed != nil {
			h.spans = append(h.spans, m.packed)
			h.total += len(m.packed)
		}
	}
	*h.weak = weak.Make(h)
	return h
}

// Prefetch announces that the parallel region after the one about to start
// reads what h names (nil: nothing known). Idle participants of the pool
// read their share of it until the next parallel region begins.
func Prefetch(h *PrefetchHint) {
	if h == nil || prefetchOff.Load() {
		workers.hint.Store(nil)
		return
	}
	workers.hint.Store(h.weak)
}

// prefetchOff disables Prefetch, for side-by-side benchmarks.
var prefetchOff atomic.Bool

// SetPrefetch turns prefetching on or off (it is on by default), for
// benchmarks that compare the two.
func SetPrefetch(on bool) {
	prefetchOff.Store(!on)
	if !on {
		workers.hint.Store(nil)
	}
}

// prefetchShareMax bounds how many bytes one participant prefetches of one
// hint: about half its L2, so that the prefetched lines are not evicted
// before they are read, and so the other half still holds the activations
// and the current product's lines. A worker that went on to prefetch the
// caller's share of the weights as well, and caps of 256 KB or 1 MB,
// measured the same as this within the noise (±3 %).
const prefetchShareMax = 512 << 10

// prefetchStep is how many bytes are prefetched between checks for the
// next region, so that a prefetching worker joins it within a microsecond
// or so.
const prefetchStep = 4 << 10

// prefetchCursor is one participant's progress through the current hint,
// so that a participant that was interrupted by a region resumes where it
// stopped.
// It holds the hint's weak handle, like the pool, not the hint.
type prefetchCursor struct {
	w    *weak.Pointer[PrefetchHint]
	done int // bytes of this participant's share already prefetched
}

// run prefetches participant self's share (of np participants) of the
// hint whose weak handle is w (nil: none) and of the hints chained after
// it (Then), prefetchStep bytes at a time, until prefetchShareMax bytes are
// done, the chain ends or stop reports true.
func (c *prefetchCursor) run(w *weak.Pointer[PrefetchHint], self, np int, stop func() bool) {
	if w != c.w {
		c.w, c.done = w, 0
	}
	if w == nil || !tilePacked || !prefetchAvailable {
		return
	}
	h := w.Value()
	if h == nil {
		return
	}
	for c.done < prefetchShareMax {
		// Find the hint of the chain and the offset in it where c.done
		// falls: each hint contributes its share, within the budget.
		at, budget := c.done, prefetchShareMax
		var cur *PrefetchHint
		lo, n := 0, 0
		for hh := h; hh != nil; hh = hh.next {
			slo, shi := self*hh.total/np, (self+1)*hh.total/np
			size := min(shi-slo, budget)
			if at < size {
				cur, lo, n = hh, slo+at, min(prefetchStep, size-at)
				break
			}
			at -= size
			budget -= size
			if prefetchChainOff.Load() {
				break
			}
		}
		if cur == nil {
			return
		}
		cur.prefetch(lo, n)
		c.done += n
		if stop() {
			return
		}
	}
}

// prefetch issues prefetches for bytes [off, off+n) of the hint's
// concatenated spans, in ascending order as a product's own reads go.
func (h *PrefetchHint) prefetch(off, n int) {
	for _, b := range h.spans {
		if off >= len(b) {
			off -= len(b)
			continue
		}
		end := min(off+n, len(b))
		prefetchLines(&b[off], end-off)
		n -= end - off
		off = 0
		if n <= 0 {
			return
		}
	}
}
