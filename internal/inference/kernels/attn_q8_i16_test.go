package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAttnQ8I16GoMatchesReference holds the integer scores' Go arithmetic
// to a float64 reference over the int16 queries and int8 keys it rounds to,
// and the rounding of the queries to half a step of their scale, for head
// sizes of every size class, in every build (purego included).
func TestAttnQ8I16GoMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	for _, hd := range []int{16, 32, 48, 64, 80, 128, 256} {
		const span = 37
		keys, ks, wide := q8Cache(r, span, hd)
		for _, g := range []int{1, 2, 3, 4} {
			q := randomVector(r, g*hd)
			q[1] *= 30
			var qq queryI16
			if !qq.set(q, hd, 0.125) {
				t.Fatalf("hd=%d g=%d: finite queries refused", hd, g)
			}
			scores := make([]float32, g*span)
			attnScoresQ8I16Go(scores, span, &qq, keys, ks, hd, span)
			for j := range g {
				d := qq.m[j] / 0.125
				for i := range hd {
					if e := math.Abs(float64(q[j*hd+i]) - float64(d)*float64(qq.q[j*hd+i])); e > 0.51*float64(d) {
						t.Fatalf("hd=%d g=%d: query %d,%d = %v rounds to %v·%v", hd, g, j, i, q[j*hd+i], qq.q[j*hd+i], d)
					}
				}
				for p := range span {
					var ref float64
					for i := range hd {
						ref += float64(qq.q[j*hd+i]) * float64(keys[p*hd+i])
					}
					ref *= float64(qq.m[j]) * float64(ks[p])
					if got := scores[j*span+p]; !near(float64(got), ref) {
						t.Fatalf("hd=%d g=%d: head %d score %d = %v, want %v", hd, g, j, p, got, ref)
					}
					// And the float scores within the query's rounding.
					var exact, bound float64
					for i := range hd {
						exact += float64(q[j*hd+i]) * float64(wide[p*hd+i])
						bound += 0.51 * float64(d) * math.Abs(float64(wide[p*hd+i]))
					}
					exact *= 0.125
					if got := float64(scores[j*span+p]); math.Abs(got-exact) > 0.125*bound+2e-5*(1+math.Abs(exact)) {
						t.Fatalf("hd=%d g=%d: head %d score %d = %v, float %v (bound %v)", hd, g, j, p, got, exact, 0.125*bound)
					}
				}
			}
		}
	}
	// A zero head scores zero; a NaN or an infinity is refused.
	var qq queryI16
	if !qq.set(make([]float32, 32), 32, 1) || qq.m[0] != 0 {
		t.Fatalf("zero query: multiplier %v", qq.m)
	}
	for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(-1))} {
		q := make([]float32, 32)
		q[7] = bad
		if qq.set(q, 32, 1) {
			t.Fatalf("query holding %v accepted", bad)
		}
	}
}
