// Package kernels holds the numeric inner loops of the inference engine:
// half-precision conversion, dequantisation and quantisation of the ggml
// block formats (F32, F16, BF16, Q8_0, Q4_0, Q5_0, Q5_1, IQ4_NL, Q2_K to
// Q6_K; Q4_1 and, where not packed, Q3_K and IQ4_NL are rewritten exactly
// into served types by Rewrite), and the matrix products the forward pass
// is made of.
//
// The seam for faster kernels is deliberately small:
//
//   - MatMul (and MatVec, its one-token case) is the entry point the model
//     uses for weights, and MatMulMany runs several products that share one
//     input (Q/K/V, gate/up) in one parallel region. They prepare each input
//     vector once per call (float view, or Q8_0 / Q8_K quantisation as ggml
//     does), then split the weight rows over the worker pool.
//   - Q8_0 and Q4_0 weights go through register-tiled kernels
//     (tile_amd64.h): one weight row by a group of up to ten tokens per
//     call, over activations packed per group (q8Tiles), so a decode step of
//     up to ten sequences is one sequential pass over the weights with each
//     weight block expanded once for all its tokens. A single token takes
//     four (Q8_0) or eight (Q4_0) rows per pass instead (tile_rows_amd64.go),
//     each row's arithmetic that of the one-row kernel, so that independent
//     accumulator chains hide the FMA latency. The AVX2 Q4_0 kernels
//     multiply the unsigned nibbles and subtract the −8 offset once per
//     (row, token) in floats (tile_amd64.h, Q4PROD). Where the assembly is
//     in use these tiles serve only the rows past a matrix's last packed
//     group (below). The other types use
//     one-token row dots (rowDotFor) and, for Q4_K, Q6_K and F16, four-token
//     row dots (rowDot4For) that unpack each weight block once for four
//     tokens.
//   - A token's result never depends on the other tokens of the call: every
//     multi-token kernel does, per token, exactly the arithmetic of the
//     one-token kernel (TestMatMulBatchInvariant), so a batched decode step
//     gives each sequence what it would get alone.
//   - The worker pool (pool.go) is persistent: the caller and the workers
//     claim contiguous chunks of rows, shrinking as the product drains, from
//     one atomic counter, so a worker the OS has descheduled does not hold a
//     product up and the participants finish together; idle workers spin
//     for up to 200 µs, then park and burn no CPU.
//
// On amd64 with AVX2+FMA+F16C (checked at init through golang.org/x/sys/cpu)
// the assembly replaces the Go kernels; the pure-Go versions (dot*Go, the
// per-token row dots) remain the fallback on other CPUs and under the
// purego build tag, and TestAsmMatchesGo / TestMatMulTokensMatchRowDots
// hold the two to each other. Where the CPU also has AVX-512 VNNI, the
// Q8_0 and Q4_0 tiles of two to ten tokens are VPDPBUSD versions
// (tile_vnni_amd64.h) over activations stored as x+128, and the Q4_K and
// Q6_K block kernels fuse their scaling into VPDPWSSD; both give the AVX2
// kernels' results bit for bit (the Q4_0 tiles those of the Exact AVX2
// kernels, which keep the offset in the integers and take their one
// token). Both families repack Q8_0 and Q4_0 matrices at load (Pack,
// packed.go) into groups whose lanes are rows, 16 for AVX-512 and 8 for
// AVX2, and run them through kernels of 1–10 tokens that need no
// horizontal sums (VPDPBUSD, gen_tile_packed.py; VPMADDUBSW,
// gen_tile_packed_avx2.py); these agree with the one-row tiles to rounding
// only, and with themselves across batches.
// PARTNERAPI_KERNELS=avx2|avx512|purego, read once at start-up, forces a
// family (ISA names the one in use); the tests run every family the CPU
// has and skip, saying so, those it lacks.
//
// Everything here is free of I/O; the supported hosts are
// little-endian (F32/F16 weights are viewed in place).
package kernels
