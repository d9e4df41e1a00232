//go:build race

package local

// raceEnabled reports whether the race detector instruments this test
// binary: it makes sync.Pool drop items at random, so allocation counts
// mean nothing under it.
const raceEnabled = true
