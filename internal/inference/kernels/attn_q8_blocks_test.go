package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestAttnQ8BlocksMatchGo holds the blocked-key score kernels to their Go
// mirror bit for bit, for head sizes of the supported models and others,
// passes of every size, spans that start and end inside and on block
// edges, and the keys' layout to what StoreKeyQ8 stored.
func TestAttnQ8BlocksMatchGo(t *testing.T) {
	defer useAVX512Q8Path(t)()
	if !keyBlocks || !blockScoresVec {
		t.Skip("no blocked key kernels on this CPU")
	}
	r := rand.New(rand.NewPCG(61, 62))
	const maxPos = 70
	for _, hd := range []int{16, 32, 48, 64, 128} {
		keys, ks, wide := q8KeyCache(r, maxPos, hd)
		for p := range maxPos {
			for i := range hd {
				if got := ks[p] * float32(keyQ8(keys, hd, p, i)); got != wide[p*hd+i] {
					t.Fatalf("hd=%d: key %d[%d] reads back %v, stored %v", hd, p, i, got, wide[p*hd+i])
				}
			}
		}
		for _, g := range []int{1, 2, 3, 4, 7} {
			q := randomVector(r, g*hd)
			for _, c := range [][2]int{{0, 1}, {0, 16}, {0, 17}, {3, 1}, {3, 13}, {3, 14}, {15, 2}, {16, 16}, {17, 40}, {5, 65}, {0, maxPos}} {
				from, span := c[0], c[1]
				name := fmt.Sprintf("hd=%d/g=%d/from=%d/span=%d", hd, g, from, span)
				got := withGuard(g * span)
				AttnScoresGroupQ8(got, q, keys, ks, nil, hd, from, span, 0.125)
				checkGuard(t, name, got)
				blockScoresVec = false
				want := make([]float32, g*span)
				AttnScoresGroupQ8(want, q, keys, ks, nil, hd, from, span, 0.125)
				blockScoresVec = true
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s: score %d = %v, Go %v", name, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// useAVX512Q8Path switches to the AVX-512 int8 attention kernels for a
// test, skipping it where they cannot run, and returns what switches back.
func useAVX512Q8Path(t *testing.T) (restore func()) {
	t.Helper()
	for _, p := range q8Paths() {
		if p.name == "avx512" {
			if p.skip != "" {
				t.Skip(p.skip)
			}
			return p.use()
		}
	}
	t.Skip("no AVX-512 int8 attention kernels in this build")
	return nil
}

// keyQ8 returns key value d of position p from a head's key cache in the
// current layout (for tests).
func keyQ8(keys []int8, hd, p, d int) int8 {
	if !blockedKeys(hd) {
		return keys[p*hd+d]
	}
	return keys[p/keyBlock*keyBlock*hd+64*(d/4)+4*(p%keyBlock)+d%4] ^ -128
}
