//go:build !purego

package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestQuantizeQ8BlocksAsmMatchesGo holds the assembly activation quantiser
// to the Go one exactly: random blocks, an all-zero block, and blocks whose
// scale is 1 so that x·id lands on exact halves (ties round away from zero).
func TestQuantizeQ8BlocksAsmMatchesGo(t *testing.T) {
	if !hasAVX2 {
		t.Skip("CPU lacks AVX2/FMA/F16C")
	}
	r := rand.New(rand.NewPCG(71, 72))
	const nb = 11
	x := randomVector(r, nb*QK8_0)
	for i := range QK8_0 {
		x[QK8_0+i] = 0
		x[2*QK8_0+i] = float32(r.IntN(255)-127) + 0.5*float32(r.IntN(2)) // halves, scale 1
		// The floats next to halves, scale 1: where adding 0.5 before
		// truncating would round the wrong way.
		h := float32(r.IntN(127)) + 0.5
		x[9*QK8_0+i] = math.Nextafter32(h, 0)
		x[10*QK8_0+i] = -math.Nextafter32(h, 200)
	}
	x[2*QK8_0], x[9*QK8_0], x[10*QK8_0] = 127, 127, -127
	x[9*QK8_0+1], x[10*QK8_0+1] = math.Nextafter32(0.5, 0), -math.Nextafter32(0.5, 0)
	for i := range QK8_0 {
		x[3*QK8_0+i] = -x[2*QK8_0+i]
	}
	for _, layout := range []struct{ qStep, dStep int }{{QK8_0, 1}, {4 * QK8_0, 4}, {3 * QK8_0, 3}} {
		size := nb * layout.qStep
		qa, qg := make([]int8, size), make([]int8, size)
		da, dg := make([]float32, nb*layout.dStep), make([]float32, nb*layout.dStep)
		ca, cg := make([]int16, size/2), make([]int16, size/2)
		sa, sg := make([]int32, nb*layout.dStep), make([]int32, nb*layout.dStep)
		quantizeQ8BlocksAsm(x, qa, layout.qStep, da, layout.dStep, ca, sa)
		quantizeQ8BlocksGo(x, qg, layout.qStep, dg, layout.dStep, cg, sg)
		for b := 0; b < nb; b++ {
			o := b * layout.qStep
			var want int32
			for _, v := range qg[o : o+QK8_0] {
				want += int32(v)
			}
			if sa[b*layout.dStep] != want || sg[b*layout.dStep] != want {
				t.Fatalf("step %d block %d: sums asm %d, go %d, want %d", layout.qStep, b, sa[b*layout.dStep], sg[b*layout.dStep], want)
			}
		}
		if !slices.Equal(qa, qg) || !slices.Equal(da, dg) || !slices.Equal(ca, cg) {
			for b := 0; b < nb; b++ {
				o := b * layout.qStep
				if !slices.Equal(qa[o:o+QK8_0], qg[o:o+QK8_0]) || da[b*layout.dStep] != dg[b*layout.dStep] {
					t.Fatalf("step %d block %d: asm d=%v q=%v, go d=%v q=%v", layout.qStep, b, da[b*layout.dStep], qa[o:o+QK8_0], dg[b*layout.dStep], qg[o:o+QK8_0])
				}
			}
			t.Fatalf("step %d: pair sums differ: asm %v, go %v", layout.qStep, ca, cg)
		}
	}
}

// TestQuantizeQ8KAsmMatchesGo holds the assembly Q8_K quantiser to
// quantizeQ8Block exactly: random blocks, an all-zero block, a block whose
// scale is 1 so that x·id lands on exact halves (ties round away from
// zero), its negation, one whose largest magnitude is its last value, and
// one of the floats next to halves.
func TestQuantizeQ8KAsmMatchesGo(t *testing.T) {
	if !hasAVX2 {
		t.Skip("CPU lacks AVX2/FMA/F16C")
	}
	r := rand.New(rand.NewPCG(73, 74))
	blocks := [][]float32{randomVector(r, QK_K), randomVector(r, QK_K), make([]float32, QK_K)}
	halves := make([]float32, QK_K)
	for i := range halves {
		halves[i] = float32(r.IntN(255)-127) + 0.5*float32(r.IntN(2))
	}
	halves[0] = 127
	neg := make([]float32, QK_K)
	for i, v := range halves {
		neg[i] = -v
	}
	last := randomVector(r, QK_K)
	last[QK_K-1] = -1000
	near := make([]float32, QK_K) // the floats next to halves, scale 1
	for i := range near {
		h := float32(r.IntN(127)) + 0.5
		near[i] = math.Nextafter32(h, float32(200*(i%2)))
	}
	near[0], near[1] = -127, math.Nextafter32(0.5, 0)
	blocks = append(blocks, halves, neg, last, near)
	for i, x := range blocks {
		qa, qg := make([]int8, QK_K), make([]int8, QK_K)
		da, dg := quantizeQ8KAsm(qa, x), quantizeQ8Block(qg, x)
		if da != dg || !slices.Equal(qa, qg) {
			t.Fatalf("block %d: asm d=%v q=%v, go d=%v q=%v", i, da, qa, dg, qg)
		}
	}
}

// TestRoundAwayExhaustive checks the arithmetic of the quantisers' ROUNDAWAY
// (quantize_amd64.s) on every float32 from 0 to 128: truncating y + h in
// float32, h the largest float below 0.5, is math.Round(y), ties away from
// zero (negative y mirror it exactly). Adding 0.5 itself fails at
// 0.49999997, whose sum rounds up to 1.
func TestRoundAwayExhaustive(t *testing.T) {
	h := math.Nextafter32(0.5, 0)
	if math.Float32bits(h) != 0x3effffff {
		t.Fatalf("h is %#x", math.Float32bits(h))
	}
	check := func(b uint32) {
		y := math.Float32frombits(b)
		s := y + h // rounded to float32, as VADDPS does
		if got, want := float32(math.Trunc(float64(s))), float32(math.Round(float64(y))); got != want {
			t.Fatalf("%v: truncated sum %v, math.Round %v", y, got, want)
		}
	}
	end := math.Float32bits(128)
	if !raceEnabled {
		for b := uint32(0); b <= end; b++ {
			check(b)
		}
		return
	}
	// Under the race detector (fifteen times slower here) only the floats
	// within 4 096 steps of each half and each integer, where a sum can
	// round across an integer, and every 4 099th float elsewhere; the
	// uninstrumented runs of CI cover all of them.
	for k := range 129 {
		for _, c := range []float32{float32(k), float32(k) + 0.5} {
			cb := math.Float32bits(c)
			for b := max(cb, 4096) - 4096; b <= cb+4096 && b <= end; b++ {
				check(b)
			}
		}
	}
	for b := uint32(0); b <= end; b += 4099 {
		check(b)
	}
	if y := math.Nextafter32(0.5, 0); float32(math.Trunc(float64(y+0.5))) == 0 {
		t.Fatal("adding 0.5 no longer fails at 0.49999997: the test lost its point")
	}
}

// BenchmarkQuantizeQ8Blocks times the activation quantiser on one token of
// 4 864 values (a 0.5B-class down projection's input) in the plain layout
// and in a ten-token tile's, for benchstat across changes, and reports
// the nanoseconds per value. (Its rounding, 3 instructions a vector since
// 2026-11-27 instead of 8, measured 1.5–1.7× the former loop in alternating
// runs on the Intel host.)
func BenchmarkQuantizeQ8Blocks(b *testing.B) {
	if !hasAVX2 {
		b.Skip("CPU lacks AVX2/FMA/F16C")
	}
	r := rand.New(rand.NewPCG(75, 76))
	const cols = 4864
	x := randomVector(r, cols)
	for _, tile := range []int{1, 10} {
		qs, d, corr, sums := make([]int8, cols*tile), make([]float32, cols/QK8_0*tile), make([]int16, cols*tile/2), make([]int32, cols/QK8_0*tile)
		b.Run(fmt.Sprintf("tile=%d", tile), func(b *testing.B) {
			for b.Loop() {
				quantizeQ8BlocksAsm(x, qs, QK8_0*tile, d, tile, corr, sums)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/cols, "ns/value")
		})
	}
}
