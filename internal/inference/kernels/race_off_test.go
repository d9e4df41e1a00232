//go:build !race

package kernels

// raceEnabled reports whether the race detector instruments this test
// binary: tests that sweep billions of values narrow their sweep under it.
const raceEnabled = false
