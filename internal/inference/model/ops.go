package model

import (
	"math"

	"partnerapi/internal/inference/kernels"
)

// rmsNormRows normalises each row of width w in src into dst and scales it
// by weight: y = x / sqrt(mean(x²) + eps) ⊙ weight. The sum of squares is
// accumulated in float64, as ggml does.
func rmsNormRows(dst, src, weight []float32, eps float32, w int) {
	for r := 0; r < len(src)/w; r++ {
		x := src[r*w : (r+1)*w]
		y := dst[r*w : (r+1)*w]
		ss := kernels.SumSquaresF64(x)
		scale := float32(1 / math.Sqrt(ss/float64(w)+float64(eps)))
		kernels.ScaleMulF32(y, x, weight, scale)
	}
}

// addBiasRows adds bias to every row of x.
func addBiasRows(x, bias []float32) {
	for r := 0; r < len(x)/len(bias); r++ {
		row := x[r*len(bias) : (r+1)*len(bias)]
		for i, b := range bias {
			row[i] += b
		}
	}
}

// addRows adds y to x element-wise (the residual connection).
func addRows(x, y []float32) {
	y = y[:len(x)]
	for i := range x {
		x[i] += y[i]
	}
}

// prepareRope computes cos/sin of every rotation angle for the n positions
// of the batch (shared by all layers).
func (s *Sequence) prepareRope(n int) {
	half := len(s.invFreq)
	s.ropeCos = grow(s.ropeCos, n*half)
	s.ropeSin = grow(s.ropeSin, n*half)
	for t := 0; t < n; t++ {
		pos := float64(s.pos + t)
		for i, f := range s.invFreq {
			sin, cos := math.Sincos(pos * f)
			s.ropeCos[t*half+i] = float32(cos)
			s.ropeSin[t*half+i] = float32(sin)
		}
	}
}

// rope rotates every head of vec (heads of HeadDim values) for batch row t.
func (s *Sequence) rope(vec []float32, t int) {
	hd, half := s.m.HeadDim, len(s.invFreq)
	cos := s.ropeCos[t*half : (t+1)*half]
	sin := s.ropeSin[t*half : (t+1)*half]
	for h := 0; h < len(vec)/hd; h++ {
		head := vec[h*hd : (h+1)*hd]
		if s.m.Arch.Rope == RopeNeoX {
			for i := 0; i < half; i++ {
				a, b := head[i], head[i+half]
				head[i] = a*cos[i] - b*sin[i]
				head[i+half] = a*sin[i] + b*cos[i]
			}
		} else {
			for i := 0; i < half; i++ {
				a, b := head[2*i], head[2*i+1]
				head[2*i] = a*cos[i] - b*sin[i]
				head[2*i+1] = a*sin[i] + b*cos[i]
			}
		}
	}
}

// attentionWork converts one attention job into the multiply-add units of
// kernels.ParallelFor's threshold (calibrated on quantised weight rows).
// The divisor is an estimate: a cached position of a head costs a few
// float FMAs per value in the vector kernels, less than a quantised weight
// value, so the smallest decode steps stay on the calling goroutine, where
// a hand-off to another core would cost more than it saves. It was 6, which
// kept a lone SmolLM2-135M sequence's attention on one core up to 340
// cached positions while the other spun; with the position chunks of
// attention.go a lone sequence has work for both from 257 positions on.
// At 3 it still kept a lone 15M-shape sequence's attention (six KV heads,
// six work items at any span) on one core below 342 positions, most of
// the window `bench engine` measures, while the other core at best
// prefetched the next product's weights. At 1 (both cores from 114
// positions on) a lone 15M sequence decoded 1.05–1.07× as fast between 256
// and 384 positions over the AVX2 packed kernels, and 1.00–1.05× over
// the earlier unpacked ones, 1.01–1.05× between 64 and 192
// (BenchmarkAttnThresholdSideBySide); SmolLM2-135M is unaffected
// (its three groups are too few items below 257 positions, and enough work
// at any divisor above).
func attentionWork(items, span, hd int) int { return items * span * hd / attnWorkDivisor }

// attnWorkDivisor is attentionWork's divisor, a variable so that a
// benchmark can compare settings side by side.
var attnWorkDivisor = 1

// normWork converts the residual add and RMS norm of rows rows of width w
// into kernels.ParallelFor's multiply-add units. The sum of squares is a
// chain of dependent float64 additions, some four cycles a value, where a
// quantised product does a multiply-add in a fraction of a cycle: sixteen
// units a value puts ten rows of SmolLM2-135M (576 wide) over the
// threshold and a single row under it.
func normWork(rows, w int) int { return rows * w * 16 }

// siluWork converts the gated activation of rows rows of width w into
// kernels.ParallelFor's units: an exponential and a division per value,
// some eight quantised multiply-adds' worth in the vector kernel.
func siluWork(rows, w int) int { return rows * w * 8 }

// storeWork converts storeRange over rows rows of w query, key and value
// values into kernels.ParallelFor's units: a rotation or a rounding to int8
// and a scatter per value, some eight multiply-adds' worth, so that ten
// decoding streams spread it and a lone one keeps it on the caller.
func storeWork(rows, w int) int { return rows * w * 8 }

// attnScratch is a worker's scratch for the attention items it claims: the
// score rows and the queries rounded for the integer score kernels (int8
// for the AVX-512 family, int16 for the AVX2 one). A worker takes one for
// all its items, so the kernels take no shared buffer item by item.
type attnScratch struct {
	scores []float32
	query  kernels.QueryScratch
}

// attnScratchPool recycles the per-worker attention scratch, so that a decode
// step allocates nothing for it, after a garbage collection too.
var attnScratchPool = make(kernels.FreeList[attnScratch], 8)

func getAttnScratch(n int) *attnScratch {
	p := attnScratchPool.Get()
	if cap(p.scores) < n {
		// Grown geometrically: the rows lengthen with the span, one
		// position a step, and an exact fit was reallocated every step.
		p.scores = make([]float32, n, max(n, 2*cap(p.scores)))
	}
	p.scores = p.scores[:n]
	return p
}

// attendGroup computes the attention of the query heads in q (heads of hd
// values, all of one KV group) over the first span cached positions, into
// out: the group's keys and values are rows, of either cache type (see
// kvcache.go). Each cached row is read once for the heads together; a
// head's result does not depend on which heads it is computed with
// (kernels.AttnScoresGroup, kernels.AttnScoresGroupQ8), so the
// single-sequence and the batched step, and any split of a group across
// workers, produce bit-identical results.
func attendGroup(q, out []float32, rows *kvRows, span int, scale float32, scratch *attnScratch) {
	scores := scratch.scores
	g := len(q) / rows.hd
	_ = scores[g*span-1] // within the length asked for, not just the pooled capacity
	sc := scores[:g*span]
	rows.scores(sc, q, span, scale, &scratch.query)
	for j := range g {
		kernels.Softmax(sc[j*span : (j+1)*span])
	}
	rows.weightedSum(out, sc, span)
}

// attendChunk is attendGroup over the first n of rows (a chunk of a longer
// span), for flash-decoding (attention.go): it writes each head's weighted
// sum over the chunk, normalised by the chunk's own softmax, to out, and
// the log of that softmax's denominator plus its max (the log-sum-exp of
// the head's scores over the chunk) to lse.
//
// The softmax kernel does not return its denominator, so it is recovered
// from one position p whose weight w_p = exp(s_p − lse) is not small: the
// first whose weight is at least half the mean (the largest weight is at
// least the mean 1/n, so there is one), lse = s_p − log w_p. The kernel's
// exp is accurate to a few ulps, so this costs no precision that matters
// while the scan usually stops at the first position.
func attendChunk(q, out []float32, lse []float64, rows *kvRows, n int, scale float32, scratch *attnScratch) {
	scores := scratch.scores
	g := len(q) / rows.hd
	_ = scores[2*g*n-1] // within the length asked for, not just the pooled capacity
	sc := scores[:g*n]
	raw := scores[g*n : 2*g*n]
	rows.scores(sc, q, n, scale, &scratch.query)
	copy(raw, sc)
	floor := 0.5 / float32(n)
	for j := range g {
		w := sc[j*n : (j+1)*n]
		kernels.Softmax(w)
		p := 0
		for p < n-1 && w[p] < floor {
			p++
		}
		lse[j] = float64(raw[j*n+p]) - math.Log(float64(w[p]))
	}
	rows.weightedSum(out, sc, n)
}
