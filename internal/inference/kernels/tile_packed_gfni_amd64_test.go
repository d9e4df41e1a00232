//go:build !purego

package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/cpu"
	"partnerapi/internal/inference/gguf"
)

// needGFNIKernels skips where the AVX-512 Q4_0 GFNI kernels cannot run
// (where they can but are not chosen, on AMD CPUs, the tests still run
// them).
func needGFNIKernels(tb testing.TB) {
	tb.Helper()
	if !hasVNNI || !cpu.X86.HasAVX512GFNI {
		tb.Skip("the GFNI kernels need AVX-512 VNNI and GFNI")
	}
}

// TestPackedQ4_0GFNIMatchesShift holds the GFNI Q4_0 kernels to the
// shift-and-mask ones bit for bit: both feed VPDPBUSD the same nibbles and
// take the same float steps. Every token count, one block and many, one
// group and several (the kernels' outer loop), random weights and
// activations.
func TestPackedQ4_0GFNIMatchesShift(t *testing.T) {
	needGFNIKernels(t)
	r := rand.New(rand.NewPCG(95, 96))
	for _, c := range []struct{ groups, cols int }{{1, 32}, {1, 576}, {3, 64}, {2, 1536}, {5, 4864}} {
		w := randomMatrix(r, gguf.Q4_0, c.groups*packGroupVNNI, c.cols)
		if !w.Packed() || w.packedGroup != packGroupVNNI {
			t.Fatalf("%d×%d: not packed in groups of %d", w.Rows, c.cols, packGroupVNNI)
		}
		for n := 1; n <= maxTileTokens; n++ {
			var p q8Tiles
			p.prepare(randomVector(r, n*c.cols), c.cols, n)
			rows := c.groups * packGroupVNNI
			run := func(ks *packedSet) []float32 {
				out := make([]float32, n*rows)
				ks[n](&w.packed[0], &p.qs[0], &p.d[0], &p.c4[0], p.nb, &out[0], 4*rows, c.groups)
				return out
			}
			want, got := run(&q4_0PackedKernels), run(&q4_0PackedGFNIKernels)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) || want[i] == 0 {
					t.Fatalf("%d groups × %d columns, %d tokens: value %d is %v, the shift kernels' %v", c.groups, c.cols, n, i, got[i], want[i])
				}
			}
		}
	}
}

// BenchmarkPackedQ4_0GFNI times the GFNI and the shift-and-mask Q4_0
// kernels alternately in rounds of calls over cache-resident data (one
// group of 576 values, as BenchmarkPackedKernel) and reports the ratio of
// their thread CPU (speedup > 1 when the GFNI kernel is faster), so that
// both see the same load of a shared machine.
func BenchmarkPackedQ4_0GFNI(b *testing.B) {
	needGFNIKernels(b)
	r := rand.New(rand.NewPCG(97, 98))
	const cols = 576
	w := randomMatrix(r, gguf.Q4_0, packGroupVNNI, cols)
	for _, n := range []int{10, 9, 8, 7, 6, 5, 4, 3, 2, 1} {
		var p q8Tiles
		p.prepare(randomVector(r, n*cols), cols, n)
		out := make([]float32, packGroupVNNI*n)
		call := func(ks *packedSet) func() {
			return func() { ks[n](&w.packed[0], &p.qs[0], &p.d[0], &p.c4[0], p.nb, &out[0], 4*packGroupVNNI, 1) }
		}
		shift, gfni := call(&q4_0PackedKernels), call(&q4_0PackedGFNIKernels)
		b.Run(fmt.Sprintf("16x%d", n), func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			const round = 256
			var tShift, tGFNI time.Duration
			for b.Loop() {
				t0 := threadCPU()
				for range round {
					shift()
				}
				t1 := threadCPU()
				for range round {
					gfni()
				}
				tShift, tGFNI = tShift+t1-t0, tGFNI+threadCPU()-t1
			}
			if tGFNI > 0 {
				macs := float64(packGroupVNNI*n*cols) * float64(b.N) * round
				b.ReportMetric(macs/float64(tGFNI.Nanoseconds()), "MAC/cpu-ns")
				b.ReportMetric(float64(tShift)/float64(tGFNI), "speedup")
			}
		})
	}
}

// BenchmarkPackedQ4_0GFNIStep times the Q4_0 weight products of a whole
// 135M-class decode step (210 products, ~56 MB, so the weights stream from
// the L3 or memory as in the engine) with the GFNI kernels and with the
// shift-and-mask ones, alternating within each iteration (and which goes
// first between iterations), and reports the
// ratio of their wall times (speedup > 1 when GFNI is faster).
func BenchmarkPackedQ4_0GFNIStep(b *testing.B) {
	needGFNIKernels(b)
	defer func(on bool) { packedGFNI = on }(packedGFNI)
	r := rand.New(rand.NewPCG(99, 100))
	const layers, E, KV, FF = 30, 576, 192, 1536
	var ws []Matrix
	for range layers {
		for _, s := range [][2]int{{E, E}, {KV, E}, {KV, E}, {E, E}, {FF, E}, {FF, E}, {E, FF}} {
			ws = append(ws, randomMatrix(r, gguf.Q4_0, s[0], s[1]))
		}
	}
	x := randomVector(r, maxTileTokens*FF)
	dst := make([]float32, maxTileTokens*FF)
	for _, n := range []int{10, 1} {
		step := func(gfni bool) time.Duration {
			packedGFNI = gfni
			t0 := time.Now()
			for _, w := range ws {
				MatMul(dst[:n*w.Rows], w, x[:n*w.Cols], n)
			}
			return time.Since(t0)
		}
		b.Run(fmt.Sprintf("tokens=%d", n), func(b *testing.B) {
			var tShift, tGFNI time.Duration
			i := 0
			for b.Loop() {
				// Each goes first every other iteration, so neither
				// always meets the caches the other left.
				if i++; i%2 == 0 {
					tShift += step(false)
					tGFNI += step(true)
				} else {
					tGFNI += step(true)
					tShift += step(false)
				}
			}
			b.ReportMetric(float64(tGFNI.Nanoseconds())/float64(b.N), "ns-gfni/op")
			b.ReportMetric(float64(tShift)/float64(tGFNI), "speedup")
		})
	}
}

// TestChooseGFNI: the environment overrides the family's default, except
// on a CPU that cannot run the GFNI kernels.
func TestChooseGFNI(t *testing.T) {
	for _, c := range []struct {
		choice string
		can    bool
		family uint32
		want   bool
	}{
		{"", true, 0, true},
		{"", true, 0x19, false},
		{"", true, 0x1a, false},
		{"gfni", true, 0x19, true},
		{"shift", true, 0, false},
		{"gfni", false, 0, false},
		{"bogus", true, 0, true},
	} {
		if got := chooseGFNI(c.choice, c.can, c.family); got != c.want {
			t.Errorf("chooseGFNI(%q, %v, %#x) = %v, want %v", c.choice, c.can, c.family, got, c.want)
		}
	}
}
