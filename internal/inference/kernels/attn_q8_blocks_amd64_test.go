//go:build !purego

package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestAttnQ8BlocksL2MatchesL1 holds the blocked score kernels that
// prefetch into the L2 to those that prefetch into the L1 bit for bit (they
// differ only in the prefetch instructions), for passes of every size,
// spans inside and across blocks, with and without value rows to prefetch.
func TestAttnQ8BlocksL2MatchesL1(t *testing.T) {
	if !keyBlocks || !blockScoresVec {
		t.Skip("no blocked key kernels in use on this CPU")
	}
	defer SetKVPrefetchL2(SetKVPrefetchL2(false))
	r := rand.New(rand.NewPCG(67, 68))
	const maxPos = 70
	for _, hd := range []int{16, 48, 64, 128} {
		keys, ks, _ := q8KeyCache(r, maxPos, hd)
		values, _, _ := q8Cache(r, KVCapacity(maxPos), hd)
		for _, g := range []int{1, 2, 3, 4, 7} {
			q := randomVector(r, g*hd)
			for _, c := range [][2]int{{0, 1}, {0, 17}, {3, 13}, {15, 2}, {17, 40}, {0, maxPos}} {
				for _, v := range [][]int8{nil, values} {
					from, span := c[0], c[1]
					name := fmt.Sprintf("hd=%d/g=%d/from=%d/span=%d/values=%v", hd, g, from, span, v != nil)
					var got [2][]float32
					for i, l2 := range []bool{false, true} {
						SetKVPrefetchL2(l2)
						got[i] = withGuard(g * span)
						AttnScoresGroupQ8(got[i], q, keys, ks, v, hd, from, span, 0.125)
						checkGuard(t, name, got[i])
					}
					for i := range g * span {
						if math.Float32bits(got[1][i]) != math.Float32bits(got[0][i]) {
							t.Fatalf("%s: score %d = %v prefetching into the L2, %v into the L1", name, i, got[1][i], got[0][i])
						}
					}
				}
			}
		}
	}
}

// TestChooseKVPrefetch checks the choice of the score kernels' prefetch
// target: the environment's "l1" or "l2" first, else the L2 on Zen 4 only.
func TestChooseKVPrefetch(t *testing.T) {
	for _, c := range []struct {
		env    string
		family uint32
		want   bool
	}{{"", 0, false}, {"", 0x19, true}, {"", 0x1a, false}, {"l1", 0x19, false}, {"l2", 0, true}, {"bogus", 0x19, true}} {
		if got := choosePrefetchL2(c.env, c.family); got != c.want {
			t.Errorf("%q on family %#x: L2 %v, want %v", c.env, c.family, got, c.want)
		}
	}
}

// TestKVPrefetchNames checks what KVPrefetch reports on each int8 path:
// the blocked kernels' setting, the L1 for the AVX2 family, none in Go.
func TestKVPrefetchNames(t *testing.T) {
	defer SetKVPrefetchL2(SetKVPrefetchL2(false))
	for _, p := range q8Paths() {
		t.Run(p.name, func(t *testing.T) {
			if p.skip != "" {
				t.Skip(p.skip)
			}
			defer p.use()()
			for _, l2 := range []bool{false, true} {
				SetKVPrefetchL2(l2)
				want := "L1"
				switch {
				case p.name == "purego":
					want = "none"
				case p.name == "avx512" && l2:
					want = "L2"
				}
				if got := KVPrefetch(); got != want {
					t.Errorf("L2 chosen %v: KVPrefetch %q, want %q", l2, got, want)
				}
			}
		})
	}
}
