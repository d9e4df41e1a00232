//go:build !purego

package kernels

import (
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
	const nb = 9
	x := randomVector(r, nb*QK8_0)
	for i := range QK8_0 {
		x[QK8_0+i] = 0
		x[2*QK8_0+i] = float32(r.IntN(255)-127) + 0.5*float32(r.IntN(2)) // halves, scale 1
	}
	x[2*QK8_0] = 127
	for i := range QK8_0 {
		x[3*QK8_0+i] = -x[2*QK8_0+i]
	}
	for _, layout := range []struct{ qStep, dStep int }{{QK8_0, 1}, {4 * QK8_0, 4}, {3 * QK8_0, 3}} {
		size := nb * layout.qStep
		qa, qg := make([]int8, size), make([]int8, size)
		da, dg := make([]float32, nb*layout.dStep), make([]float32, nb*layout.dStep)
		ca, cg := make([]int16, size/2), make([]int16, size/2)
		quantizeQ8BlocksAsm(x, qa, layout.qStep, da, layout.dStep, ca)
		quantizeQ8BlocksGo(x, qg, layout.qStep, dg, layout.dStep, cg)
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
// zero), its negation, and one whose largest magnitude is its last value.
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
	blocks = append(blocks, halves, neg, last)
	for i, x := range blocks {
		qa, qg := make([]int8, QK_K), make([]int8, QK_K)
		da, dg := quantizeQ8KAsm(qa, x), quantizeQ8Block(qg, x)
		if da != dg || !slices.Equal(qa, qg) {
			t.Fatalf("block %d: asm d=%v q=%v, go d=%v q=%v", i, da, qa, dg, qg)
		}
	}
}
