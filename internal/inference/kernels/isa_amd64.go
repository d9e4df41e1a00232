//go:build !purego

package kernels

import (
	"os"

	"golang.org/x/sys/cpu"
)

// KernelsEnv names the environment variable that forces a kernel family,
// read once at start-up: "avx512" (the default where the CPU has it),
// "avx2" or "purego". A family the CPU lacks falls back to the best one it
// has, and ISA reports what runs. Tests and benchmarks use it to compare
// the families on one machine.
const KernelsEnv = "PARTNERAPI_KERNELS"

var kernelsChoice = os.Getenv(KernelsEnv)

// cpuAVX2 reports whether the CPU (and OS) can run the AVX2 kernels: AVX2
// for the integer byte products, FMA for the float accumulation and F16C
// (present on every AVX2 CPU) for the half-precision block scales.
var cpuAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpu.X86.HasAVX

// cpuVNNI reports whether the CPU can also run the AVX-512 VNNI tiles:
// VPDPBUSD on ymm registers needs AVX512_VNNI with AVX512VL (x/sys/cpu
// reports them only where the OS saves the AVX-512 state).
var cpuVNNI = cpuAVX2 && cpu.X86.HasAVX512VNNI && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512BW

// hasAVX2 reports whether the assembly kernels are in use, hasVNNI whether
// the Q8_0 and Q4_0 tiles are the VNNI ones.
var (
	hasAVX2 = cpuAVX2 && kernelsChoice != "purego"
	hasVNNI = hasAVX2 && cpuVNNI && kernelsChoice != "avx2"
)

// ISA names the kernel family in use: "avx512-vnni" (AVX2 kernels with the
// Q8_0 and Q4_0 tiles in AVX-512 VNNI), "avx2" or "purego".
func ISA() string {
	switch {
	case hasVNNI:
		return "avx512-vnni"
	case hasAVX2:
		return "avx2"
	}
	return "purego"
}
