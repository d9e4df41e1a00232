package kernels

import (
	"math/rand/v2"
	"sync"
	"time"

	"partnerapi/internal/inference/gguf"
)

// SplitCalibration is what CalibrateSplit measured on this machine.
type SplitCalibration struct {
	// Handoff is what splitting a product over the pool adds to half its
	// one-core time, with the workers awake: publishing the job, the
	// claims, the caches of the other core, waiting for the last
	// participant. Between two cores of one CCX it is a fraction of a
	// microsecond; between two vCPUs placed far apart (one host here
	// ping-ponged a cache line in ~500 ns each way) more.
	Handoff time.Duration
	// Rate is the multiply-adds per nanosecond of a one-token Q8_0 product
	// of a cache-resident matrix on the calling core alone (its activations
	// quantised included).
	Rate float64
	// Threshold is the work, in multiply-adds, from which the pool splits
	// a weight product: 2·Handoff·Rate within [parallelThreshold,
	// maxSplitThreshold].
	Threshold int
}

// maxSplitThreshold bounds the calibrated threshold. The probe's matrix is
// in cache, where a core multiplies fastest; a single stream of a model
// larger than the caches reads its weights from memory at a fraction of
// that rate, and there a product as small as SmolLM2-135M's attention
// output (576 × 576, 332k multiply-adds) still gains from both cores: with
// the threshold at 512k that shape's single-stream decode ran 0.95× on the
// host where the hand-off took 1.7 µs, at 256k 1.00×.
const maxSplitThreshold = 1 << 18

var (
	splitOnce sync.Once
	splitCal  SplitCalibration
)

// CalibrateSplit measures, once per process, what a parallel region costs
// here and sets the work from which the worker pool splits a weight
// product: a product of W multiply-adds runs in W/r on one core and in
// W/(2r) + h on two, so splitting pays only from W = 2·h·r on. The fixed
// threshold it replaces (parallelThreshold, 32 768 multiply-adds) suited
// hosts whose cores hand a region over in a few hundred nanoseconds; on a
// host where a split cost 1.7 µs, stories15M's one-token products (83k–221k
// multiply-adds) ran faster on one core, and single-stream decode of that
// shape rose 1.05–1.11× (Q8_0) and 1.20–1.34× (Q4_0) with the threshold at
// 256k, while SmolLM2-135M's and every ten-stream step stayed as they were
// (BenchmarkSplitSideBySide). Other regions (ParallelFor: attention, norms,
// stores) keep the fixed threshold: their work is a unit conversion chosen
// against it, not a measured time, and raising it slowed ten-stream steps.
// Until CalibrateSplit is called (the engine calls it when it opens), and
// in processes that never run a model, products keep the fixed threshold.
// It changes where work runs, never a result: every product row is
// computed the same way on either path.
func CalibrateSplit() SplitCalibration {
	splitOnce.Do(func() { splitCal = workers.calibrate() })
	return splitCal
}

func (p *workerPool) calibrate() SplitCalibration {
	c := SplitCalibration{Threshold: parallelThreshold}
	if p.n == 1 {
		return c
	}
	pr := newSplitProbe()
	if pr == nil {
		return c
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	one, split := pr.best(nil), pr.best(p)
	if one <= 0 {
		return c
	}
	// Split, the product takes its half on each core plus what the region
	// itself costs; that cost is the hand-off.
	c.Handoff = max(split-one/2, 0)
	c.Rate = float64(pr.work()) / float64(one.Nanoseconds())
	c.Threshold = min(max(int(2*float64(c.Handoff.Nanoseconds())*c.Rate), parallelThreshold), maxSplitThreshold)
	p.splitAt.Store(int64(c.Threshold))
	return c
}

// splitProbe is a one-token product of a 512 × 576 Q8_0 matrix (about
// 310 kB packed, held in the L2 caches), large enough that both cores take
// part when it is split.
type splitProbe struct {
	w      Matrix
	x, dst []float32
	buf    *activationBuffer
}

func newSplitProbe() *splitProbe {
	const rows, cols = 512, 576
	r := rand.New(rand.NewPCG(5, 7))
	vals := make([]float32, rows*cols)
	for i := range vals {
		vals[i] = float32(r.NormFloat64())
	}
	data, err := Quantize(gguf.Q8_0, vals)
	if err != nil {
		return nil
	}
	w := Pack(Matrix{Type: gguf.Q8_0, Rows: rows, Cols: cols, Data: data})
	return &splitProbe{w: w, x: vals[:cols], dst: make([]float32, rows), buf: new(activationBuffer)}
}

func (pr *splitProbe) work() int { return pr.w.Rows * pr.w.Cols }

// product runs the probe's product as MatMul does: on the caller alone
// when p is nil, else split over p (whose mu the caller holds).
func (pr *splitProbe) product(p *workerPool) {
	b, w := pr.buf, pr.w
	b.reset()
	b.prepare(w, pr.x, w.Cols, 1)
	if p == nil {
		b.mulRows(pr.dst, w, 0, w.Rows)
	} else {
		unit := rowUnit()
		p.run((w.Rows+unit-1)/unit, pr.work(), func(lo, hi int) { b.mulRows(pr.dst, w, lo*unit, min(hi*unit, w.Rows)) })
	}
	b.release()
}

// best is the shortest mean time of one product over five rounds of 16,
// after a round that warms the caches and wakes the workers.
func (pr *splitProbe) best(p *workerPool) time.Duration {
	const calls = 16
	best := time.Duration(1<<63 - 1)
	for round := range 6 {
		start := time.Now()
		for range calls {
			pr.product(p)
		}
		if d := time.Since(start) / calls; round > 0 {
			best = min(best, d)
		}
	}
	return best
}

// SetSplitThreshold makes the pool split weight products from work
// multiply-adds on, for benchmarks that compare thresholds side by side,
// and returns the previous threshold.
func SetSplitThreshold(work int) int { return int(workers.splitAt.Swap(int64(work))) }
