package kernels

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"partnerapi/internal/inference/gguf"
)

// BenchmarkParallelForHandoff is the fixed cost of one parallel region:
// handing trivial chunks to the pool and waiting for all of them, for the
// pool in use and, side by side, the channel-per-task pool it replaced.
func BenchmarkParallelForHandoff(b *testing.B) {
	var sink [64]int
	fn := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			sink[i]++
		}
	}
	b.Run("pool", func(b *testing.B) {
		for b.Loop() {
			parallelFor(64, 1<<30, fn)
		}
	})
	old := newChannelPool(workers.n)
	defer old.close()
	b.Run("channel", func(b *testing.B) {
		for b.Loop() {
			old.parallelFor(64, fn)
		}
	})
}

// channelPool is the previous worker pool (one channel send and a WaitGroup
// per share), kept to measure the hand-off against.
type channelPool struct {
	n     int
	tasks chan channelTask
}

type channelTask struct {
	fn     func(lo, hi int)
	lo, hi int
	wg     *sync.WaitGroup
}

func newChannelPool(n int) *channelPool {
	p := &channelPool{n: n, tasks: make(chan channelTask, 64)}
	for i := 1; i < n; i++ {
		go func() {
			for t := range p.tasks {
				t.fn(t.lo, t.hi)
				t.wg.Done()
			}
		}()
	}
	return p
}

func (p *channelPool) close() { close(p.tasks) }

// parallelForFunc runs parallelFor's contract on this pool.
func (p *channelPool) parallelForFunc(n, work int, fn func(lo, hi int)) {
	if work < parallelThreshold || n < 2*p.n {
		fn(0, n)
		return
	}
	p.parallelFor(n, fn)
}

func (p *channelPool) parallelFor(n int, fn func(lo, hi int)) {
	var wg sync.WaitGroup
	chunk := (n + p.n - 1) / p.n
	for lo := chunk; lo < n; lo += chunk {
		wg.Add(1)
		p.tasks <- channelTask{fn: fn, lo: lo, hi: min(lo+chunk, n), wg: &wg}
	}
	fn(0, min(chunk, n))
	wg.Wait()
}

// BenchmarkDecodeStep135M runs the weight products of one 135M-class decode
// step (30 layers of Q/K/V/O and gate/up/down products; the output
// projection excepted) for 1 and 10 tokens: about 210 small products, where
// the hand-off cost of each parallel region adds up.
func BenchmarkDecodeStep135M(b *testing.B) {
	step := newDecodeStep135M(rand.New(rand.NewPCG(61, 62)))
	for _, n := range []int{1, 10} {
		b.Run(fmt.Sprintf("tokens=%d", n), func(b *testing.B) {
			for b.Loop() {
				step.run(n)
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "tok/s")
		})
	}
}

type decodeStep struct {
	layers [][7]Matrix // q, k, v, o, gate, up, down
	x, out []float32
}

// newDecodeStep135M makes distinct random Q8_0 weights per layer (about
// 105 MB), so that as in a real decode step they stream from memory.
func newDecodeStep135M(r *rand.Rand) *decodeStep {
	return newDecodeStep(r, gguf.Q8_0, 30, 576, 192, 1536)
}

// newDecodeStep makes the weight products of a decode step of the given
// shape: distinct random weights of typ per layer.
func newDecodeStep(r *rand.Rand, typ gguf.GGMLType, layers, E, KV, FF int) *decodeStep {
	mat := func(rows, cols int) Matrix {
		return Pack(Matrix{Type: typ, Rows: rows, Cols: cols, Data: randomRow(r, typ, rows*cols)})
	}
	s := &decodeStep{x: randomVector(r, 10*FF), out: make([]float32, 10*FF)}
	for range layers {
		s.layers = append(s.layers, [7]Matrix{mat(E, E), mat(KV, E), mat(KV, E), mat(E, E), mat(FF, E), mat(FF, E), mat(E, FF)})
	}
	return s
}

func (s *decodeStep) run(n int) {
	for _, ly := range s.layers {
		for _, w := range ly {
			MatMul(s.out[:n*w.Rows], w, s.x[:n*w.Cols], n)
		}
	}
}

// BenchmarkPoolSideBySide times the same work on the pool in use and on the
// channel pool it replaced, alternating within each iteration so both
// see the same machine load (the development machine is shared), and
// reports each one's time per iteration and the ratio. The work is single
// products of several shapes and a whole 135M-class decode step (210
// products over 105 MB of weights, with 1 and 10 tokens).
func BenchmarkPoolSideBySide(b *testing.B) {
	r := rand.New(rand.NewPCG(63, 64))
	old := newChannelPool(workers.n)
	defer old.close()
	type workload struct {
		name string
		run  func()
	}
	var loads []workload
	for _, c := range []struct{ rows, cols, tokens int }{{192, 576, 1}, {1536, 576, 1}, {1536, 576, 10}, {576, 1536, 64}} {
		w := randomMatrix(r, gguf.Q8_0, c.rows, c.cols)
		x := randomVector(r, c.tokens*c.cols)
		dst := make([]float32, c.tokens*c.rows)
		loads = append(loads, workload{fmt.Sprintf("%dx%d/tokens=%d", c.rows, c.cols, c.tokens), func() { MatMul(dst, w, x, c.tokens) }})
	}
	step := newDecodeStep135M(r)
	for _, n := range []int{1, 10} {
		loads = append(loads, workload{fmt.Sprintf("decode-step/tokens=%d", n), func() { step.run(n) }})
	}
	for _, l := range loads {
		b.Run(l.name, func(b *testing.B) {
			var pooled, channel time.Duration
			for b.Loop() {
				t0 := time.Now()
				l.run()
				t1 := time.Now()
				parallelFor = old.parallelForFunc
				l.run()
				parallelFor = poolParallelFor
				pooled, channel = pooled+t1.Sub(t0), channel+time.Since(t1)
			}
			b.ReportMetric(float64(pooled.Nanoseconds())/float64(b.N), "ns-pool/op")
			b.ReportMetric(float64(channel.Nanoseconds())/float64(b.N), "ns-channel/op")
			b.ReportMetric(float64(channel)/float64(pooled), "speedup")
		})
	}
}

// BenchmarkPoolSpinSideBySide times a 135M-class decode step (the weight
// products of 30 layers) with the workers spinning for poolSpin before they
// park, and with them parking at once.
func BenchmarkPoolSpinSideBySide(b *testing.B) {
	step := newDecodeStep135M(rand.New(rand.NewPCG(65, 66)))
	spinning := poolSpin.Load()
	for _, n := range []int{1, 10} {
		b.Run(fmt.Sprintf("decode-step/tokens=%d", n), func(b *testing.B) {
			settingSideBySide(b, func() { step.run(n) }, "spin", "park", func(on bool) {
				poolSpin.Store(0)
				if on {
					poolSpin.Store(spinning)
				}
			})
		})
	}
}

// BenchmarkPoolChunksSideBySide times a 135M-class decode step (the weight
// products of 30 layers) with shrinking chunks and with equal chunks of
// n ÷ 4·participants.
func BenchmarkPoolChunksSideBySide(b *testing.B) {
	step := newDecodeStep135M(rand.New(rand.NewPCG(69, 70)))
	for _, n := range []int{1, 10} {
		b.Run(fmt.Sprintf("decode-step/tokens=%d", n), func(b *testing.B) {
			settingSideBySide(b, func() { step.run(n) }, "shrinking", "equal", func(on bool) { poolEqualChunks.Store(!on) })
		})
	}
}

// BenchmarkPoolDoneSideBySide times a 135M-class decode step (the weight
// products of 30 layers) with each participant counting its finished items
// once per region and once per chunk.
func BenchmarkPoolDoneSideBySide(b *testing.B) {
	step := newDecodeStep135M(rand.New(rand.NewPCG(71, 72)))
	for _, n := range []int{1, 10} {
		b.Run(fmt.Sprintf("decode-step/tokens=%d", n), func(b *testing.B) {
			settingSideBySide(b, func() { step.run(n) }, "once", "perchunk", func(on bool) { poolDonePerChunk.Store(!on) })
		})
	}
}

// BenchmarkPoolClaimsSideBySide times the weight products of 15M- and
// 135M-class decode steps (Q8_0 and Q4_0; one and ten tokens) with claims
// of at least poolClaimWork and with the earlier floor of n ÷ 32 items
// alone.
func BenchmarkPoolClaimsSideBySide(b *testing.B) {
	r := rand.New(rand.NewPCG(73, 74))
	for _, shape := range []struct {
		name              string
		layers, E, KV, FF int
	}{{"15m", 6, 288, 288, 768}, {"135m", 30, 576, 192, 1536}} {
		for _, typ := range []gguf.GGMLType{gguf.Q8_0, gguf.Q4_0} {
			step := newDecodeStep(r, typ, shape.layers, shape.E, shape.KV, shape.FF)
			for _, n := range []int{1, 10} {
				b.Run(fmt.Sprintf("%s/%v/tokens=%d", shape.name, typ, n), func(b *testing.B) {
					settingSideBySide(b, func() { step.run(n) }, "claimwork", "items", func(on bool) {
						poolClaimWork.Store(0)
						if on {
							poolClaimWork.Store(defaultClaimWork)
						}
					})
				})
			}
		}
	}
}

// settingSideBySide times run with a pool setting on (the one in use, named
// on) and off (named off), alternating within each iteration so both see
// the same machine load (the development machine is shared), reports each
// side's time per iteration and off's time over on's, and leaves the
// setting on.
func settingSideBySide(b *testing.B, run func(), on, off string, set func(on bool)) {
	defer set(true)
	var tOn, tOff time.Duration
	for b.Loop() {
		t0 := time.Now()
		run()
		t1 := time.Now()
		set(false)
		run()
		set(true)
		tOn, tOff = tOn+t1.Sub(t0), tOff+time.Since(t1)
	}
	b.ReportMetric(float64(tOn.Nanoseconds())/float64(b.N), "ns-"+on+"/op")
	b.ReportMetric(float64(tOff.Nanoseconds())/float64(b.N), "ns-"+off+"/op")
	b.ReportMetric(float64(tOff)/float64(tOn), "speedup")
}
