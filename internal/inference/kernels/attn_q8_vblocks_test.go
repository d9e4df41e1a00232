package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// q8ValueCache stores span random value rows of hd values in a value cache
// of whole blocks, in the current layout, and returns it with the rows as
// the cache holds them (scale times value). The unwritten rest of the last
// block holds garbage bytes and NaN scales, which no sum may read. It
// panics if a row does not read back as QuantizeKVRow rounds it, or if the
// vector store and the Go one leave different bytes.
func q8ValueCache(r *rand.Rand, span, hd int) ([]int8, []float32, []float32) {
	n := KVCapacity(span)
	v, s, wide := make([]int8, n*hd), make([]float32, n), make([]float32, span*hd)
	for i := range v {
		v[i] = int8(r.IntN(256) - 128)
	}
	for i := range s {
		s[i] = float32(math.NaN())
	}
	tmp, want := make([]int8, hd), make([]int8, hd)
	for p := range span {
		row := randomVector(r, hd)
		before := slices.Clone(v)
		StoreValueQ8With(v, s, p, row, tmp)
		if blockSumsVec && blockedValues(hd) {
			blockSumsVec = false
			StoreValueQ8With(before, s, p, row, tmp)
			blockSumsVec = true
			if !slices.Equal(before, v) {
				panic(fmt.Sprintf("hd=%d: position %d stored otherwise by the vector store", hd, p))
			}
		}
		ws := QuantizeKVRow(want, row)
		for d := range hd {
			if got := valueQ8(v, hd, p, d); got != want[d] || s[p] != ws {
				panic(fmt.Sprintf("hd=%d: value %d[%d] reads back %d·%v, stored %d·%v", hd, p, d, got, s[p], want[d], ws))
			}
			wide[p*hd+d] = s[p] * float32(valueQ8(v, hd, p, d))
		}
	}
	return v, s, wide
}

// softmaxWeights returns g heads' weights over span positions, each head's
// summing to one; peaked heads put most of the weight on one position.
func softmaxWeights(r *rand.Rand, g, span int, peaked bool) []float32 {
	w := make([]float32, g*span)
	for j := range g {
		x := w[j*span : (j+1)*span]
		copy(x, randomVector(r, span))
		if peaked {
			x[r.IntN(span)] += 12
		}
		Softmax(x)
	}
	return w
}

// valueQ8 returns value d of position p from a head's value cache in the
// current layout (for tests).
func valueQ8(values []int8, hd, p, d int) int8 {
	if !blockedValues(hd) {
		return values[p*hd+d]
	}
	return values[p/keyBlock*keyBlock*hd+p%keyBlock/4*4*hd+4*d+p%4]
}

// TestAttnQ8VBlocksMatchGo holds the blocked-value weighted-sum kernels to
// their Go mirror bit for bit, and both to the float sum of the rows within
// the bound of the coefficients' rounding (attn_q8_vblocks.go), for head
// sizes of the supported models and others, passes of every size, and spans
// that start and end inside and on block edges.
func TestAttnQ8VBlocksMatchGo(t *testing.T) {
	defer useAVX512Q8Path(t)()
	if !keyBlocks || !blockSumsVec {
		t.Skip("no blocked value kernels on this CPU")
	}
	// The kernels are tested wherever they run, whichever layout this CPU
	// takes by default (chooseValueBlocks).
	defer func(was bool) { valueBlocks = was }(valueBlocks)
	valueBlocks = true
	r := rand.New(rand.NewPCG(71, 72))
	const maxPos = 70
	var worst float64
	for _, hd := range []int{16, 32, 48, 64, 80, 128} {
		values, vs, wide := q8ValueCache(r, maxPos, hd)
		for _, g := range []int{1, 2, 3, 4, 7} {
			for _, c := range [][2]int{{0, 1}, {0, 16}, {0, 17}, {3, 1}, {3, 13}, {3, 14}, {15, 2}, {16, 16}, {17, 40}, {5, 65}, {0, maxPos}} {
				from, span := c[0], c[1]
				for _, peaked := range []bool{false, true} {
					name := fmt.Sprintf("hd=%d/g=%d/from=%d/span=%d/peaked=%v", hd, g, from, span, peaked)
					w := softmaxWeights(r, g, span, peaked)
					got := withGuard(g * hd)
					for i := range got {
						got[i] = 99 // the kernels must set, not add to, the output
					}
					AttnWeightedSumQ8At(got, w, values, vs, hd, from, span)
					checkGuard(t, name, got)
					blockSumsVec = false
					want := make([]float32, g*hd)
					AttnWeightedSumQ8At(want, w, values, vs, hd, from, span)
					blockSumsVec = true
					for i := range want {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%s: value %d = %v, Go %v", name, i, got[i], want[i])
						}
					}
					for j := range g {
						for d := range hd {
							var ref, bound float64
							for p := range span {
								c := float64(w[j*span+p])
								ref += c * float64(wide[(from+p)*hd+d])
								bound += c * float64(vs[from+p]) * 127
							}
							e := math.Abs(float64(got[j*hd+d])-ref) / bound
							worst = max(worst, e)
							// A coefficient is off by at most 1/131070 of its
							// block's largest; sixteen of them, each times at
							// most 127·vs, stay within 16/131070 of bound.
							if e > 16.0/131070+1e-6 {
								t.Fatalf("%s: head %d value %d = %v, float sum %v (error %.3g of the bound)", name, j, d, got[j*hd+d], ref, e)
							}
						}
					}
				}
			}
		}
	}
	t.Logf("largest error: %.3g of Σ c_p·127·vs_p", worst)
}

// TestVBlockConstants checks the constants the kernel and its mirror share
// against the numbers they stand for.
func TestVBlockConstants(t *testing.T) {
	if got, want := uint32(vblockFloorBits), math.Float32bits(1e-30); got != want {
		t.Errorf("floor bits %#x, float32(1e-30) is %#x", got, want)
	}
	if got, want := uint32(vblockInvBits), math.Float32bits(float32(1.0/65535)); got != want {
		t.Errorf("multiplier bits %#x, float32(1/65535) is %#x", got, want)
	}
}

// TestChooseValueBlocks checks the choice of the value layout: the
// environment's "blocks" or "rows" first, else blocks on Zen 5 only.
func TestChooseValueBlocks(t *testing.T) {
	for _, c := range []struct {
		env    string
		family uint32
		want   bool
	}{{"", 0, false}, {"", 0x19, false}, {"", 0x1a, true}, {"rows", 0x1a, false}, {"blocks", 0x19, true}, {"bogus", 0x1a, true}} {
		if got := chooseValueBlocks(c.env, c.family); got != c.want {
			t.Errorf("%q on family %#x: blocks %v, want %v", c.env, c.family, got, c.want)
		}
	}
}

// TestAttnQ8VBlocksNaN checks that a row no scale describes makes the sums
// over it NaN, as the float kernels' do, and sums that leave it out finite.
func TestAttnQ8VBlocksNaN(t *testing.T) {
	forEachQ8Path(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(73, 74))
		const hd, span = 48, 40
		values, vs, _ := q8ValueCache(r, span, hd)
		row := randomVector(r, hd)
		row[7] = float32(math.Inf(1))
		StoreValueQ8With(values, vs, 20, row, make([]int8, hd))
		w := softmaxWeights(r, 1, span, false)
		out := make([]float32, hd)
		AttnWeightedSumQ8At(out, w, values, vs, hd, 0, span)
		for d, v := range out {
			if v == v {
				t.Fatalf("value %d = %v over a NaN row, want NaN", d, v)
			}
		}
		AttnWeightedSumQ8At(out, w[:20], values, vs, hd, 0, 20)
		AttnWeightedSumQ8At(out[:0], w, values, vs, hd, 0, 20)
		for d, v := range out {
			if v != v {
				t.Fatalf("value %d is NaN over rows before the NaN one", d)
			}
		}
	})
}

// BenchmarkAttnWeightedSumQ8At times one weighted sum over a head's value
// cache in blocks (where the AVX-512 VNNI kernels run) and, beside it, in
// rows: the 15M shape (one head of 48) and
// SmolLM2-135M's (a group of three heads of 64), over 320 positions.
func BenchmarkAttnWeightedSumQ8At(b *testing.B) {
	r := rand.New(rand.NewPCG(75, 76))
	for _, c := range []struct{ hd, g, span int }{{48, 1, 320}, {64, 3, 320}} {
		w := softmaxWeights(r, c.g, c.span, false)
		out := make([]float32, c.g*c.hd)
		for _, layout := range []string{"blocks", "rows"} {
			if layout == "blocks" && !(keyBlocks && blockSumsVec) {
				continue
			}
			vb := valueBlocks
			valueBlocks = layout == "block"
			values, vs, _ := q8ValueCache(r, c.span, c.hd)
			b.Run(fmt.Sprintf("hd=%d/g=%d/span=%d/layout=%s", c.hd, c.g, c.span, layout), func(b *testing.B) {
				for b.Loop() {
					AttnWeightedSumQ8At(out, w, values, vs, c.hd, 0, c.span)
				}
			})
			valueBlocks = vb
		}
	}
}
