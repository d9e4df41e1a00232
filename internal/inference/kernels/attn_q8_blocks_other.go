//go:build !amd64 || purego

package kernels

// attnScoresQ8BlocksAsm exists only with the assembly; blockScoresVec is
// never set without it.
func attnScoresQ8BlocksAsm(scores []float32, ostride int, qq *queryQ8, keys []int8, ks []float32, hd, lane0, n, vdelta int) {
	panic("kernels: no blocked-key score kernels in this build")
}

// KVPrefetch names where the int8 cache's score kernels prefetch: nowhere
// without the assembly.
func KVPrefetch() string { return "none" }

// attnWeightedSumQ8BlocksAsm exists only with the assembly; blockSumsVec is
// never set without it.
func attnWeightedSumQ8BlocksAsm(out, w []float32, values []int8, vscale []float32, hd, lane0, n int) {
	panic("kernels: no blocked-value weighted-sum kernels in this build")
}

// storeValueQuadAsm exists only with the assembly.
func storeValueQuadAsm(quad, src []int8, k int) {
	panic("kernels: no blocked-value store kernel in this build")
}
