// Package kernels holds the numeric inner loops of the inference engine:
// half-precision conversion, dequantisation and quantisation of the ggml
// block formats (F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q6_K), and the matrix
// products the forward pass is made of.
//
// The seam for faster kernels is deliberately small:
//
//   - MatMul (and MatVec, its one-token case) is the only entry point the
//     model uses for weights. It prepares each input vector once per call
//     (activation.prepare: float view, or Q8_0 / Q8_K quantisation as ggml
//     does), then splits the weight rows over the persistent worker pool and
//     calls one rowDot function per (row, token).
//   - rowDotFor picks the rowDot for a weight type. An assembly or archsimd
//     implementation replaces these functions (dotF32, dotF16, dotQ8_0,
//     dotQ4_0, dotQ4K, dotQ6K) behind build tags and CPU feature checks; the
//     activation layout they read is documented on type activation and the
//     weight layout is ggml's, byte for byte.
//   - Batched prefill already calls MatMul with several tokens, so a kernel
//     that processes 2–4 tokens per weight row pass plugs in at the same spot.
//
// On amd64 with AVX2+FMA+F16C (checked at init through golang.org/x/sys/cpu)
// dot_amd64.s replaces the row dots with hand-written Plan 9 assembly; the
// pure-Go versions (dot*Go) remain the fallback on other CPUs and under the
// purego build tag, and TestAsmMatchesGo holds the two to each other.
//
// Everything here is free of I/O; the supported hosts are
// little-endian (F32/F16 weights are viewed in place).
package kernels
