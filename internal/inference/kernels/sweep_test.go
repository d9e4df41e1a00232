package kernels

// underRace narrows a size sweep of an equivalence test when the race
// detector instruments the test binary: it drops the largest sizes (the
// last, which the sweeps list in ascending order). The race detector does
// not see into the assembly kernels, and the pure-Go references these tests
// compare with ran 5–10× slower under it, so the full sweeps took some five
// minutes of the CI's -race run on a 2-core host for nothing the detector
// could find there; they run in full in the runs without it (.ci/run runs
// the kernels once per family without -race). The products still go
// through the worker pool under the detector, at the remaining sizes.
func underRace[T any](sizes []T) []T {
	if raceEnabled && len(sizes) > 2 {
		return sizes[:len(sizes)-1]
	}
	return sizes
}
