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
// for the half-precision block scales (VCVTPH2PS in the F16 dot and the
// packed tiles). Every AVX2 CPU has F16C, but a hypervisor may hide it from
// a guest, and a kernel using it there would die of an illegal instruction
// where the Go kernels run.
var cpuAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpu.X86.HasAVX && cpu.X86.HasF16C

// cpuVNNI reports whether the CPU can also run the AVX-512 VNNI kernels:
// VPDPBUSD and VPDPWSSD need AVX512_VNNI, on ymm registers also AVX512VL,
// and the zmm tiles' byte operations AVX512BW (x/sys/cpu reports them only
// where the OS saves the AVX-512 state).
var cpuVNNI = cpuAVX2 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512VNNI

// hasAVX2 reports whether the assembly kernels are in use, hasVNNI whether
// the Q8_0 and Q4_0 tiles and the Q4_K and Q6_K block kernels are the VNNI
// ones.
var hasAVX2, hasVNNI = chooseKernels(kernelsChoice, cpuAVX2, cpuVNNI)

// chooseKernels picks the kernel families from the PARTNERAPI_KERNELS
// value and what the CPU has: the best one unless the choice names a lesser
// one ("avx2", "purego"); a family the CPU lacks, or an unknown name, falls
// back to the best available.
func chooseKernels(choice string, cpuAVX2, cpuVNNI bool) (avx2, vnni bool) {
	avx2 = cpuAVX2 && choice != "purego"
	vnni = avx2 && cpuVNNI && choice != "avx2"
	return avx2, vnni
}

// ISA names the kernel family in use: "avx512-vnni" (the AVX2 kernels with
// the quantised products in AVX-512 VNNI), "avx2" or "purego".
func ISA() string {
	switch {
	case hasVNNI:
		return "avx512-vnni"
	case hasAVX2:
		return "avx2"
	}
	return "purego"
}
