package kernels

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"partnerapi/internal/inference/gguf"
)

// BenchmarkParallelForHandoff is the fixed cost of one parallel region:
// handing trivial chunks to the pool and waiting for all of them, for the
// spinning pool in use and, side by side, the channel-per-task pool it
// replaced.
func BenchmarkParallelForHandoff(b *testing.B) {
	var sink [64]int
	fn := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			sink[i]++
		}
	}
	b.Run("spinning", func(b *testing.B) {
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
// step (30 layers of Q/K/V/O and gate/up/down products plus the output
// projection excepted) for 1 and 10 tokens: about 210 small products, where the
// hand-off cost of each parallel region adds up.
func BenchmarkDecodeStep135M(b *testing.B) {
	r := rand.New(rand.NewPCG(61, 62))
	const layers, E, KV, FF = 30, 576, 192, 1536
	type layer struct{ q, k, v, o, gate, up, down Matrix }
	// Distinct random weights per layer (about 105 MB), so that as in a
	// real decode step they stream from memory rather than cache.
	mat := func(rows, cols int) Matrix {
		return Matrix{Type: gguf.Q8_0, Rows: rows, Cols: cols, Data: randomRow(r, gguf.Q8_0, rows*cols)}
	}
	ls := make([]layer, layers)
	for i := range ls {
		ls[i] = layer{q: mat(E, E), k: mat(KV, E), v: mat(KV, E), o: mat(E, E), gate: mat(FF, E), up: mat(FF, E), down: mat(E, FF)}
	}
	for _, n := range []int{1, 10} {
		x := randomVector(r, n*FF)
		out := make([]float32, n*FF)
		b.Run(fmt.Sprintf("tokens=%d", n), func(b *testing.B) {
			for b.Loop() {
				for l := 0; l < layers; l++ {
					ly := &ls[l]
					for _, w := range []Matrix{ly.q, ly.k, ly.v, ly.o, ly.gate, ly.up} {
						MatMul(out[:n*w.Rows], w, x[:n*E], n)
					}
					MatMul(out[:n*E], ly.down, x[:n*FF], n)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "tok/s")
		})
	}
}
