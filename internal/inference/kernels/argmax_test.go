package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// argmaxLoop is the plain loop Argmax must agree with.
func argmaxLoop(x []float32) int {
	if len(x) == 0 {
		return 0
	}
	best, bestV := 0, x[0]
	for i, v := range x {
		if v > bestV {
			best, bestV = i, v
		}
	}
	return best
}

// TestArgmaxMatchesLoop holds Argmax (vector where the CPU has it) to the
// plain loop over random vectors of every tail length, ties, signed zeros,
// infinities and NaNs in every position of a block, and all-NaN input.
func TestArgmaxMatchesLoop(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 52))
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	var cases [][]float32
	for _, n := range []int{0, 1, 2, 15, 16, 17, 31, 63, 64, 65, 100, 1000, 32000} {
		cases = append(cases, randomVector(r, n))
	}
	for at := range 70 {
		for _, v := range []float32{nan, inf, -inf, 5, float32(math.Copysign(0, -1))} {
			x := randomVector(r, 80)
			x[at] = v
			cases = append(cases, x)
			tie := randomVector(r, 80)
			tie[at], tie[79-at%10] = 9, 9
			cases = append(cases, tie)
		}
	}
	cases = append(cases, []float32{nan, 1, 2}, []float32{-inf, -inf}, make([]float32, 48))
	allNaN := make([]float32, 64)
	for i := range allNaN {
		allNaN[i] = nan
	}
	cases = append(cases, allNaN, append([]float32{1}, allNaN...), append(allNaN[:40:40], 3))
	zeros := make([]float32, 33)
	zeros[0], zeros[20] = float32(math.Copysign(0, -1)), -1
	cases = append(cases, zeros)
	for n, x := range cases {
		if got, want := Argmax(x), argmaxLoop(x); got != want {
			t.Fatalf("case %d (%d values): Argmax %d, loop %d", n, len(x), got, want)
		}
	}
}

// BenchmarkArgmax times greedy drawing over a 32 000-value vocabulary
// (stories15M) in the vector kernel and the loop.
func BenchmarkArgmax(b *testing.B) {
	x := randomVector(rand.New(rand.NewPCG(1, 10)), 32000)
	b.Run(fmt.Sprintf("n=%d/vector", len(x)), func(b *testing.B) {
		for b.Loop() {
			Argmax(x)
		}
	})
	b.Run(fmt.Sprintf("n=%d/loop", len(x)), func(b *testing.B) {
		for b.Loop() {
			argmaxLoop(x)
		}
	})
}
