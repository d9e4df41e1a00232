//go:build !purego

package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"partnerapi/internal/inference/gguf"
)

// TestWeightPrefetchL2SameBits holds the Q8_0 packed kernels that prefetch
// into the L2 to exactly the bits of those that prefetch into the L1, for
// every token count of one group and a prefill count, on whole groups and
// a tail: the two differ only in a prefetch hint, and whichever the CPU
// gets must not change a token's result.
func TestWeightPrefetchL2SameBits(t *testing.T) {
	if !hasVNNI {
		t.Skip("the L2-prefetching kernels are the AVX-512 family's; this CPU or PARTNERAPI_KERNELS uses another")
	}
	defer SetWeightPrefetchL2(prefetchL2)
	r := rand.New(rand.NewPCG(93, 94))
	for _, cols := range []int{32, 576, 4864} {
		const rows = 4*16 + 3
		w := randomMatrix(r, gguf.Q8_0, rows, cols)
		for _, n := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 23} {
			t.Run(fmt.Sprintf("%d cols/%d tokens", cols, n), func(t *testing.T) {
				x := randomVector(r, n*cols)
				var p q8Tiles
				p.prepare(x, cols, n)
				l1, l2 := make([]float32, n*rows), make([]float32, n*rows)
				SetWeightPrefetchL2(false)
				mulRowsPackedAsm(l1, w, &p, 0, rows)
				SetWeightPrefetchL2(true)
				mulRowsPackedAsm(l2, w, &p, 0, rows)
				for i := range l1 {
					if math.Float32bits(l1[i]) != math.Float32bits(l2[i]) {
						t.Fatalf("value %d: L2-prefetching kernel %v, L1-prefetching %v", i, l2[i], l1[i])
					}
				}
			})
		}
	}
}

// TestChoosePrefetchL2 pins the choice: the environment wins, otherwise
// AMD family 19h (Zen 4 among the AVX-512 CPUs) prefetches into the L2.
func TestChoosePrefetchL2(t *testing.T) {
	for _, c := range []struct {
		choice string
		family uint32
		want   bool
	}{
		{"", 0x19, true}, {"", 0x1a, false}, {"", 0, false},
		{"l1", 0x19, false}, {"l2", 0x1a, true}, {"l2", 0, true}, {"bogus", 0x19, true},
	} {
		if got := choosePrefetchL2(c.choice, c.family); got != c.want {
			t.Errorf("choosePrefetchL2(%q, %#x) = %v, want %v", c.choice, c.family, got, c.want)
		}
	}
}

// TestAMDFamily checks the CPUID decoding against what every x86 CPU must
// report: AMD families in use are 0x10 and above, other vendors read 0.
func TestAMDFamily(t *testing.T) {
	f := amdFamily()
	_, b, _, _ := cpuid(0, 0)
	if amd := b == 0x68747541; amd != (f >= 0x10) {
		t.Fatalf("vendor AMD %v but family %#x", amd, f)
	}
	t.Logf("AMD family %#x; Q8_0 weights prefetched into the %s", f, WeightPrefetch())
}
