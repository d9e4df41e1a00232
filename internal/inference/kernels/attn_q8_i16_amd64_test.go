//go:build !purego

package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// The two AVX2 score kernels, for BenchmarkAttnQ8ScoresI16.
var (
	attnScoresQ8I16Vec = attnScoresQ8I16Asm
	attnScoresQ8F32Vec = attnScoresQ8Asm
)

// TestAttnQ8I16AsmMatchesGo holds the AVX2 integer score kernels to their
// Go arithmetic bit for bit (passes of one, two and three heads, every
// head size class, spans with and without a tail of single positions), the
// vector rounding of the queries to the Go one, and the integer scores to
// the float kernels within the queries' rounding.
func TestAttnQ8I16AsmMatchesGo(t *testing.T) {
	if !cpuAVX2 {
		t.Skip("this CPU has no AVX2 and FMA")
	}
	restore := q8GoPath().use()
	sc, sm := q8Scores, q8Sums
	useQ8Kernels(false)
	defer func() { restore(); q8Scores, q8Sums = sc, sm }()
	r := rand.New(rand.NewPCG(63, 64))
	for _, hd := range []int{16, 32, 48, 64, 80, 128, 256} {
		const maxSpan = 331
		keys, ks, wide := q8Cache(r, maxSpan, hd)
		values, _, _ := q8Cache(r, maxSpan, hd)
		for _, g := range []int{1, 2, 3, 4, 5, 7} {
			q := randomVector(r, g*hd)
			q[2] *= -50
			var vq, gq queryI16
			vq.set(q, hd, 0.125)
			func() {
				defer func(v func([]int16, []float32, float32)) { kvQuantize16Vec = v }(kvQuantize16Vec)
				kvQuantize16Vec = nil
				gq.set(q, hd, 0.125)
			}()
			for i := range gq.q {
				if vq.q[i] != gq.q[i] {
					t.Fatalf("hd=%d g=%d: query value %d rounds to %d in the kernel, %d in Go", hd, g, i, vq.q[i], gq.q[i])
				}
			}
			for _, span := range []int{1, 3, 4, 5, 8, 17, 64, 255, maxSpan} {
				name := fmt.Sprintf("hd=%d/g=%d/span=%d", hd, g, span)
				got, want, float := withGuard(g*span), make([]float32, g*span), make([]float32, g*span)
				AttnScoresGroupQ8(got, q, keys, ks, values, hd, 0, span, 0.125)
				checkGuard(t, name, got)
				attnScoresQ8I16Go(want, span, &gq, keys, ks, hd, span)
				attnScoresQ8Asm(float, q, keys[:span*hd], ks[:span], values[:span*hd], hd, span, 0.125, nil)
				for j := range g {
					d := float64(gq.m[j] / 0.125)
					for p := range span {
						a, b := got[j*span+p], want[j*span+p]
						if math.Float32bits(a) != math.Float32bits(b) {
							t.Fatalf("%s: head %d score %d = %v, Go %v", name, j, p, a, b)
						}
						var bound float64
						for i := range hd {
							bound += 0.51 * d * math.Abs(float64(wide[p*hd+i]))
						}
						f := float64(float[j*span+p])
						if math.Abs(float64(a)-f) > 0.125*bound+2e-5*(1+math.Abs(f)) {
							t.Fatalf("%s: head %d score %d = %v, float kernel %v (bound %v)", name, j, p, a, f, 0.125*bound)
						}
					}
				}
			}
		}
	}
}

// BenchmarkAttnQ8ScoresI16 alternates the float and the integer score
// kernels of the AVX2 family, each call timed on the thread's CPU clock
// (medians), over the key caches of a
// ten-stream decode step at 320 positions (as BenchmarkAttnQ8DecodeStep),
// scores only, and over one cache-resident group of 135M.
func BenchmarkAttnQ8ScoresI16(b *testing.B) {
	if kvQuantize16Vec == nil || attnScoresQ8Vec == nil || keyBlocks {
		b.Skip("the AVX2 int8 KV kernels are not in use")
	}
	const span, seqs = 320, 10
	for _, c := range []struct {
		shape    int
		resident bool
	}{{0, false}, {1, false}, {1, true}} {
		shape, resident := attnStepShapes[c.shape], c.resident
		r := rand.New(rand.NewPCG(1, 9))
		hd, g := shape.hd, shape.g
		caches := seqs * shape.layers * shape.kvHeads
		if resident {
			caches = 1
		}
		k8, v8 := make([][]int8, caches), make([][]int8, caches)
		ks := make([][]float32, caches)
		for i := range caches {
			k8[i], ks[i], _ = q8Cache(r, span, hd)
			v8[i], _, _ = q8Cache(r, span, hd)
		}
		q := randomVector(r, g*hd)
		scores := make([]float32, g*span)
		b.Run(fmt.Sprintf("%s/resident=%v", shape.name, resident), func(b *testing.B) {
			float := attnScoresQ8Vec
			defer func() { attnScoresQ8Vec = float }()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var ti, tf []float64
			run := func(f func(scores, q []float32, keys []int8, kscale []float32, values []int8, hd, span int, scale float32, qq *queryI16)) float64 {
				t0 := threadCPU()
				for i := range caches {
					f(scores, q, k8[i], ks[i], v8[i], hd, span, 0.125, nil)
				}
				return float64(threadCPU() - t0)
			}
			// Each goes first every other iteration: the second call may
			// find rows the first left in the cache.
			for i := 0; b.Loop(); i++ {
				if i%2 == 0 {
					ti = append(ti, run(attnScoresQ8I16Vec))
					tf = append(tf, run(attnScoresQ8F32Vec))
				} else {
					tf = append(tf, run(attnScoresQ8F32Vec))
					ti = append(ti, run(attnScoresQ8I16Vec))
				}
			}
			slices.Sort(ti)
			slices.Sort(tf)
			mi, mf := ti[len(ti)/2], tf[len(tf)/2]
			b.ReportMetric(mi, "cpu-ns-i16")
			b.ReportMetric(mf, "cpu-ns-f32")
			b.ReportMetric(mi/mf, "i16÷f32")
		})
	}
}
