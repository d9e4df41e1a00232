package kernels

// ArgmaxF32 returns the index of the largest value of x, the first on ties,
// 0 for an empty x. NaNs never win, except a NaN x[0], which nothing
// compares greater than; +0 and -0 tie. That is exactly what one running
// best scanned from the start keeps, which greedy sampling has always
// done, so the pick does not depend on the kernel family.
//
// A greedy decode step scans the whole vocabulary (32 000 to 150 000
// logits) per stream; one running best is a chain of dependent compares
// of one or two cycles a logit, more than the rest of a small model's
// sampling and a visible share of its step when ten streams decode.
func ArgmaxF32(x []float32) int { return argmaxF32(x) }

var argmaxF32 = argmaxF32Go

// argmaxF32Go keeps eight lanes, each the running best of every eighth
// value, so eight compare chains are in flight; the merge takes the lanes'
// best value with the lowest index, which is what a single chain keeps.
func argmaxF32Go(x []float32) int {
	const lanes = 8
	if len(x) < 2*lanes {
		return argmaxOneChain(x)
	}
	// Every lane starts from x[0], so a NaN there wins everywhere and ties
	// with it keep index 0, as in the single chain.
	var bv [lanes]float32
	var bi [lanes]int
	for j := range bv {
		bv[j] = x[0]
	}
	i := 1
	for ; i+lanes <= len(x); i += lanes {
		v := x[i : i+lanes : i+lanes]
		if v[0] > bv[0] {
			bv[0], bi[0] = v[0], i
		}
		if v[1] > bv[1] {
			bv[1], bi[1] = v[1], i+1
		}
		if v[2] > bv[2] {
			bv[2], bi[2] = v[2], i+2
		}
		if v[3] > bv[3] {
			bv[3], bi[3] = v[3], i+3
		}
		if v[4] > bv[4] {
			bv[4], bi[4] = v[4], i+4
		}
		if v[5] > bv[5] {
			bv[5], bi[5] = v[5], i+5
		}
		if v[6] > bv[6] {
			bv[6], bi[6] = v[6], i+6
		}
		if v[7] > bv[7] {
			bv[7], bi[7] = v[7], i+7
		}
	}
	best, bestV := bi[0], bv[0]
	for j := 1; j < lanes; j++ {
		if bv[j] > bestV || (bv[j] == bestV && bi[j] < best) {
			best, bestV = bi[j], bv[j]
		}
	}
	for ; i < len(x); i++ {
		if x[i] > bestV {
			best, bestV = i, x[i]
		}
	}
	return best
}

// argmaxOneChain is the definition: one running best from the start.
func argmaxOneChain(x []float32) int {
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
