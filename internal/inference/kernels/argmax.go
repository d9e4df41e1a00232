package kernels

// Argmax returns the index of the first largest value of x (0 for an empty
// x), as a plain loop keeping the first value greater than the best so far
// does: a NaN first value wins, later NaNs never do. Greedy decoding draws
// every token this way over the whole vocabulary (32 000 to 152 000
// logits per sequence and step); the vector form finds the maximum sixteen
// values at a time and then its first position, some eight times faster.
func Argmax(x []float32) int {
	if len(x) == 0 || x[0] != x[0] {
		return 0
	}
	best, bestV, i := 0, x[0], 0
	if n := len(x) &^ 15; argmaxVec != nil && n > 0 {
		// The vector kernel skips NaNs as the loop does, and its maximum
		// of the whole prefix is at least x[0], so its first index of that
		// maximum is the loop's over the prefix.
		if at, v := argmaxVec(x[:n]); v > bestV {
			best, bestV = at, v
		}
		i = n
	}
	for ; i < len(x); i++ {
		if x[i] > bestV {
			best, bestV = i, x[i]
		}
	}
	return best
}

// argmaxVec returns the first index of the largest non-NaN value of x and
// that value (-Inf and index 0 when there is none); len(x) is a multiple
// of sixteen. Set at init where the AVX-512 family runs.
var argmaxVec func(x []float32) (int, float32)
