package kernels

import (
	"math"
)

// The int8 value cache in blocks, for the AVX-512 VNNI family, as the keys
// are (attn_q8_blocks.go). Over row-major values the weighted sum
// sign-extends, converts and multiplies every value of every position in
// float32: about fifteen µops a position for a head of 48, 274 of the
// 533 ns that one 15M attention item (a head over 320 positions) took on
// the Zen 5 host. In blocks, one VPDPBUSD multiplies four positions' int8
// values by their four weights as unsigned bytes and adds them into int32
// sums, sixteen values at a time.
//
// A value block holds positions 16b … 16b+15 of a head; quad s of it (4·hd
// bytes at s·4·hd) holds positions 16b+4s … 16b+4s+3, value d of position
// 16b+4s+k at byte 4d+k. A 64-byte load is then sixteen values d, each a
// dword of four positions, the lanes VPDPBUSD sums over.
//
// The weights: the coefficient of position p is c_p = w_p · vs_p (its
// softmax weight times its row scale), never negative. Per block of
// sixteen positions, with m the block's largest coefficient (at least
// 1e-30, so that a block of zero coefficients divides by no zero), each
// is rounded to an integer u_p = round(c_p · 65535/m)
// of sixteen bits, taken as two unsigned bytes, and the block's integer
// sums Σ hi(u_p)·v_p and Σ lo(u_p)·v_p (two VPDPBUSD a quad) combine
// exactly into Σ u_p·v_p, which enters the float32 output as its float
// times m·(1/65535). A coefficient is thus off by at most 1/131070 of its
// block's largest, far below the values' own rounding to 1/254 of their
// row's largest: over random rows and softmax weights (hd 48 and 64, 20 to
// 320 positions, flat and peaked) the sums differed from the float kernel's
// by 1–2.4e-5 of their RMS, while the values' rounding moves them by
// 4–8e-3. A block with a NaN coefficient (a row no scale describes,
// or NaN weights) makes the head's whole output NaN, as the float kernels'
// sums do. The kernel (attn_q8_vsums_amd64.s) and attnWeightedSumQ8BlocksGo
// do the same operations in the same order and agree bit for bit.
//
// The layout only permutes bytes within a block, so the cache keeps its
// size and is copied in whole blocks; positions of a block not yet written
// get coefficient zero whatever their bytes hold.

// The kernel's constants, as float32 bits the Go mirror uses as well: the
// least block maximum the coefficients are scaled by (what coefficients
// below it carry is beneath any output that matters), and the multiplier's
// factor.
const (
	vblockFloorBits = 0x0da24260 // float32(1e-30)
	vblockInvBits   = 0x37800080 // float32(1.0 / 65535)
)

// valueBlocks reports whether the int8 value cache is in blocks (set with
// the kernels at start-up, see chooseValueBlocks; tests switch it).
var valueBlocks bool

// blockedValues reports whether a head of hd values keeps its values in
// blocks: beside blocked keys, for head sizes of whole 64-byte vectors of
// sixteen values.
func blockedValues(hd int) bool { return keyBlocks && valueBlocks && hd%16 == 0 }

// KVValuesEnv chooses the int8 value cache's layout on the AVX-512 VNNI
// family: "blocks" or "rows".
const KVValuesEnv = "PARTNERAPI_KV_VALUES"

// chooseValueBlocks is the value layout of the AVX-512 VNNI family: the
// environment's choice, else blocks on Zen 5 (AMD family 1Ah) only. There
// (2026-12-03, after a clean-clone CI run, code of this change) one head of
// 48 over 320 positions took 152 ns against 284 for the float kernel over
// rows and a group of three heads of 64 took 514 against 643 ns
// (BenchmarkAttnWeightedSumQ8At, from the L1). In whole steps the gain is
// smaller than that host's noise at ~320 cached positions and shows at
// 1 024: one binary alternating the two layouts (PARTNERAPI_KV_VALUES,
// scripts/engine-ab.sh, six rounds) decoded ten 15M streams 0.94–0.99× as
// fast over 256-token prompts (a step took 0.98–1.03× the CPU in
// BenchmarkTenStreamCPU) and 1.15× (Q4_0) and 1.06× (Q8_0) over 1 024-token
// ones; binaries before and after the change gave 1.01–1.04× and 1.12×.
// Ten 135M streams ran 0.96–1.04×, their caches streaming from memory
// either way. On a Zen 4 (2026-11-30) a blocked weighted sum in integers, 1.8× as fast from the
// L1, made a ten-stream step 0.94–0.97× as fast, waiting on the same
// memory, so Zen 4 and CPUs not measured keep the rows until they are.
func chooseValueBlocks(choice string, family uint32) bool {
	switch choice {
	case "blocks":
		return true
	case "rows":
		return false
	}
	return family == 0x1a
}

// KVValues names the int8 value cache's layout: "blocks" or "rows" with
// vector kernels, "none" without them (the half-precision cache is then the
// default).
func KVValues() string {
	switch {
	case attnScoresQ8Vec == nil:
		return "none"
	case blockedValues(64):
		return "blocks"
	}
	return "rows"
}

// blockSumsVec reports whether the vector kernel over blocked values is in
// use (set with the kernels; tests switch it off to run the Go mirror).
var blockSumsVec bool

// StoreValueQ8With rounds the value row of position p to int8 and stores
// it and its scale in one KV head's value cache (values and vscale from
// position zero) in the layout the kernels in use read; tmp is the
// caller's scratch of at least len(row) values.
func StoreValueQ8With(values []int8, vscale []float32, p int, row []float32, tmp []int8) {
	hd := len(row)
	if !blockedValues(hd) {
		vscale[p] = QuantizeKVRow(values[p*hd:(p+1)*hd], row)
		return
	}
	tmp = tmp[:hd]
	vscale[p] = QuantizeKVRow(tmp, row)
	quad := values[p/keyBlock*keyBlock*hd+p%keyBlock/4*4*hd:][:4*hd]
	k := p % 4
	if blockSumsVec {
		// A byte at a time in Go took 1.7 % of a ten-stream 15M step's
		// CPU (360 rows a step).
		storeValueQuadAsm(quad, tmp, k)
		return
	}
	// Byte by byte: the positions of a quad may be stored by two workers
	// at once, so no store may span another position's bytes.
	for d, v := range tmp {
		quad[4*d+k] = v
	}
}

// AttnWeightedSumQ8At sets out[j·hd:(j+1)·hd] = Σ_p (w[j·span+p] ·
// vscale[from+p]) · value from+p for every head j < len(out)/hd, where
// values and vscale are one KV head's value cache from position zero, in
// the layout StoreValueQ8With writes.
func AttnWeightedSumQ8At(out, w []float32, values []int8, vscale []float32, hd, from, span int) {
	if !blockedValues(hd) {
		AttnWeightedSumGroupQ8(out, w, values[from*hd:], vscale[from:], hd, span)
		return
	}
	g := len(out) / hd
	if g == 0 {
		return
	}
	out = out[:g*hd]
	if span == 0 {
		clear(out)
		return
	}
	w = w[:g*span]
	// The kernels read whole blocks: from the one holding from to the one
	// holding the last position.
	b0, b1 := from/keyBlock, (from+span+keyBlock-1)/keyBlock
	values, vscale = values[b0*keyBlock*hd:b1*keyBlock*hd], vscale[b0*keyBlock:b1*keyBlock]
	lane0 := from - b0*keyBlock
	if blockSumsVec {
		attnWeightedSumQ8BlocksAsm(out, w, values, vscale, hd, lane0, span)
		return
	}
	attnWeightedSumQ8BlocksGo(out, w, values, vscale, hd, lane0, span)
}

// vblockCoefficients rounds a block's coefficients c_q = w[q] · vs[q] to
// sixteen-bit integers in u and returns the multiplier of the block's
// integer sums (NaN if a coefficient is NaN): the kernel's arithmetic.
// Lanes outside the positions summed have w and vs zero.
func vblockCoefficients(u *[keyBlock]uint32, w, vs *[keyBlock]float32) float32 {
	var c [keyBlock]float32
	var m float32
	nan := false
	for q := range c {
		c[q] = w[q] * vs[q]
		nan = nan || c[q] != c[q]
		m = max(m, c[q])
	}
	if nan {
		return float32(math.NaN())
	}
	m = max(m, math.Float32frombits(vblockFloorBits))
	inv := float32(65535) / m
	for q := range c {
		u[q] = uint32(int32(math.RoundToEven(float64(c[q] * inv))))
	}
	return m * math.Float32frombits(vblockInvBits)
}

// attnWeightedSumQ8BlocksGo is the kernel's arithmetic in Go over values
// and vscale from the first block on; lane0 is position from's lane in it.
func attnWeightedSumQ8BlocksGo(out, w []float32, values []int8, vscale []float32, hd, lane0, span int) {
	hi, lo := make([]int32, hd), make([]int32, hd)
	clear(out)
	for j := range len(out) / hd {
		wj, oj := w[j*span:(j+1)*span], out[j*hd:(j+1)*hd]
		for b := 0; b*keyBlock < lane0+span; b++ {
			var wb, vb [keyBlock]float32
			for q := max(lane0-b*keyBlock, 0); q < min(lane0+span-b*keyBlock, keyBlock); q++ {
				wb[q], vb[q] = wj[b*keyBlock+q-lane0], vscale[b*keyBlock+q]
			}
			var u [keyBlock]uint32
			mult := vblockCoefficients(&u, &wb, &vb)
			clear(hi)
			clear(lo)
			for q := range keyBlock {
				for d := range hd {
					v := int32(values[b*keyBlock*hd+q/4*4*hd+4*d+q%4])
					hi[d] += int32(uint8(u[q]>>8)) * v
					lo[d] += int32(uint8(u[q])) * v
				}
			}
			for d := range hd {
				// The product is rounded on its own, as VMULPS then
				// VADDPS round it (no fused multiply-add).
				oj[d] += float32(float32(hi[d]<<8+lo[d]) * mult)
			}
		}
	}
}
