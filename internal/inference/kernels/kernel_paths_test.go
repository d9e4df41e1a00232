package kernels

import "testing"

// tilePath is one way of running the Q8_0 and Q4_0 products: use switches
// to it and returns the function that switches back; skip, when set, says
// why this machine cannot run it.
type tilePath struct {
	name string
	skip string
	use  func() (restore func())
}

// rowDotsPath runs the products through the per-token row dots instead of
// the tiles.
func rowDotsPath() tilePath {
	return tilePath{name: "rowdots", use: func() func() {
		tiled := tiledMulRows
		tiledMulRows = nil
		return func() { tiledMulRows = tiled }
	}}
}

// forEachTilePath runs fn once per path of tilePaths as a subtest, skipping
// with the reason the paths this CPU lacks. The tests of this package do
// not run in parallel, so switching the package's kernels is safe.
func forEachTilePath(t *testing.T, fn func(t *testing.T)) {
	for _, p := range tilePaths() {
		t.Run(p.name, func(t *testing.T) {
			if p.skip != "" {
				t.Skip(p.skip)
			}
			defer p.use()()
			fn(t)
		})
	}
}

// attnPath is one way of running the grouped half-precision attention
// kernels, switched like a tilePath.
type attnPath = tilePath

// goAttnPath runs grouped attention in the portable Go kernels.
func goAttnPath() attnPath {
	return attnPath{name: "purego", use: func() func() {
		scores, sums := attnScoresGroupVec, attnWeightedSumGroupVec
		attnScoresGroupVec, attnWeightedSumGroupVec = nil, nil
		return func() { attnScoresGroupVec, attnWeightedSumGroupVec = scores, sums }
	}}
}

// forEachAttnPath runs fn once per path of attnPaths as a subtest, as
// forEachTilePath does for the products.
func forEachAttnPath(t *testing.T, fn func(t *testing.T)) {
	for _, p := range attnPaths() {
		t.Run(p.name, func(t *testing.T) {
			if p.skip != "" {
				t.Skip(p.skip)
			}
			defer p.use()()
			fn(t)
		})
	}
}
