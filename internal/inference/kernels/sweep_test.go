package kernels

// underRace narrows a size sweep of an equivalence test when the race
// detector instruments the test binary: it leaves out the largest size
// (the last: the sweeps list theirs in ascending order). The detector does
// not see into the assembly kernels, and the pure-Go references these tests
// compare with ran 5–10× slower under it, so the full sweeps took some five
// minutes of the CI's -race run on a 2-core host for nothing the detector
// could find there; .ci/run runs them in full, without it, once per kernel
// family. The worker pool's own tests and the model's run under the
// detector as before.
func underRace(sizes []int) []int {
	if raceEnabled && len(sizes) > 2 {
		return sizes[:len(sizes)-1]
	}
	return sizes
}
