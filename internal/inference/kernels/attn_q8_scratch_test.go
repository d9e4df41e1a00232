package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestAttnScoresGroupQ8WithScratch checks that scores computed with a
// caller's QueryScratch, kept across calls of other shapes as a worker
// keeps it across its work items, are bit for bit those computed with the
// shared free list's buffers, on every int8 cache path: the scratch only
// moves where the rounded queries live.
func TestAttnScoresGroupQ8WithScratch(t *testing.T) {
	forEachQ8Path(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(7, 8))
		var sc QueryScratch
		// Large, small, then large again: the scratch grows, is resliced
		// shorter, and must not keep a smaller call's lengths.
		cases := []struct{ hd, g, from, span int }{
			{128, 7, 3, 300}, {48, 1, 0, 1}, {64, 3, 5, 37}, {48, 6, 0, 257}, {128, 2, 0, 64}, {64, 7, 11, 129},
		}
		for _, c := range cases {
			t.Run(fmt.Sprintf("hd=%d/g=%d/from=%d/span=%d", c.hd, c.g, c.from, c.span), func(t *testing.T) {
				keys, ks, _ := q8KeyCache(r, c.from+c.span, c.hd)
				values, _, _ := q8Cache(r, KVCapacity(c.from+c.span), c.hd)
				q := randomVector(r, c.g*c.hd)
				want, got := make([]float32, c.g*c.span), make([]float32, c.g*c.span)
				AttnScoresGroupQ8With(want, q, keys, ks, values, c.hd, c.from, c.span, 0.125, nil)
				AttnScoresGroupQ8With(got, q, keys, ks, values, c.hd, c.from, c.span, 0.125, &sc)
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("score %d (head %d, position %d): %v with the caller's scratch, %v without",
							i, i/c.span, i%c.span, got[i], want[i])
					}
				}
			})
		}
	})
}
