//go:build !amd64 || purego

package kernels

// hasAVX2 is false where the assembly kernels are not built; the portable
// Go kernels in dot.go stay in place.
const hasAVX2 = false

// KernelsEnv names the environment variable that chooses a kernel family
// on amd64; builds without the assembly have only the portable one.
const KernelsEnv = "PARTNERAPI_KERNELS"

// ISA names the kernel family in use: here always the portable Go one.
func ISA() string { return "purego" }
