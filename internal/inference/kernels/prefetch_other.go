//go:build !amd64 || purego

package kernels

// Builds without the assembly do not prefetch: they have no packed weights
// to name, and their kernels are compute-bound.

func prefetchLines(p *byte, n int) {}

const prefetchAvailable = false

// SetWeightPrefetchL2 does nothing: builds without the assembly have no
// packed kernels to prefetch with (tile_packed_l2_amd64.go).
func SetWeightPrefetchL2(on bool) {}

// WeightPrefetch names where the packed kernels prefetch: builds without
// the assembly do not.
func WeightPrefetch() string { return "none" }

// Q4_0UnpackEnv is the setting that picks the amd64 Q4_0 kernels
// (tile_packed_gfni_amd64.go); builds without the assembly read it nowhere
// but name it, so that `partnerapi bench engine` prints the same line on
// every platform.
const Q4_0UnpackEnv = "PARTNERAPI_Q4_0_UNPACK"

// Q4_0Unpack names how the packed Q4_0 kernels take their high nibbles:
// builds without the assembly have none.
func Q4_0Unpack() string { return "none" }
