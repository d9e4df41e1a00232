//go:build !purego

package kernels

// The helpers here serve only the amd64 assembly kernels (the packed and
// one-row tile products and their tests): the pure-Go kernels, which
// other CPUs and the purego tag run, neither split rows into packed groups
// nor prepare activations through them. Keeping them beside the kernels
// that use them, rather than in the portable files, leaves nothing unused
// in a build without those kernels (staticcheck U1000 on darwin/arm64 and
// under purego).

// prepare quantises the n vectors of x (cols values each) into p, biased
// for the VNNI kernels where they are in use and there is more than one
// token: for a single token, whose product streams the weights at one
// block per token, the AVX2 kernels measured faster (Q4_0 single-stream
// decode 0.8× on VNNI, Q8_0 even), and the two give the same bits.
//
// Where the packed kernels are in use the activations stay unbiased (the
// packed kernels take them as the signed operand, and the one-row tiles of
// a packed matrix's tail rows then run in AVX2, which gives the VNNI
// tiles' bits) and carry their block sums.
func (p *q8Tiles) prepare(x []float32, cols, n int) {
	p.prepareFor(x, cols, n, true)
}

// prepareBiased is prepare with the choice of bias made by the caller.
func (p *q8Tiles) prepareBiased(x []float32, cols, n int, biased bool) {
	p.prepareBiasedCQ(x, cols, n, biased, true)
}

// prepareBiasedCQ is prepareBiased that leaves out the Q4_0 offset
// corrections when withCQ is false, as prepareFor does.
func (p *q8Tiles) prepareBiasedCQ(x []float32, cols, n int, biased, withCQ bool) {
	p.prepareSplit(x, cols, n, biased, withCQ, false)
}

// wholeGroups splits rows [lo, hi) of a matrix of `rows` rows packed in
// groups of `group` into the whole groups [g0, g1), which it returns, and
// the rows outside them (a split off a group boundary, the tail past the
// last group), which it passes to rest; ok is false when no whole group
// lies in the range (rest then had all of it).
func wholeGroups(lo, hi, rows, group int, rest func(lo, hi int)) (g0, g1 int, ok bool) {
	g0 = (lo + group - 1) / group
	g1 = min(hi, rows) / group
	if g0 >= g1 {
		rest(lo, hi)
		return g0, g1, false
	}
	if lo < g0*group {
		rest(lo, g0*group)
	}
	if hi > g1*group {
		rest(g1*group, hi)
	}
	return g0, g1, true
}

// blockSums fills c8, c4 and c16 with each quantised block's correction,
// −128·Σx, −8·Σx and −16·Σx (Q5_0), and ms with its float term d_x·Σx
// (Q5_1's minimums multiply it): block i of the packed activations (whatever its token
// group) is qs[32i:32i+32] with its scale at d[i] and its sum at sums[i].
// The sums are the quantiser's (quantizeQ8Blocks).
func (p *q8Tiles) blockSums() {
	blocks := p.n * p.nb
	p.c8, p.c4, p.c16, p.ms = grow(p.c8, blocks), grow(p.c4, blocks), grow(p.c16, blocks), grow(p.ms, blocks)
	p.blockSumsRange(0, blocks)
}
