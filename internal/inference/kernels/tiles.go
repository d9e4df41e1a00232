package kernels

import (
	"math"
	"unsafe"

	"partnerapi/internal/inference/gguf"
)

// maxTileTokens is the largest token group the tiled kernels take in one
// call: a 10-stream decode step is then one pass over the weights, each
// weight block expanded once and multiplied by all ten tokens.
const maxTileTokens = 10

// q8Tiles holds n activation vectors quantised to Q8_0 in the layout the
// register-tiled kernels read. Tokens come in groups of at most
// maxTileTokens, as even in size as possible (tileGroups), each group
// packed block by block: token k of a T-token group starting at token t0
// has block b at qs[t0·cols+32·T·b+32·k] and its scale at d[t0·nb+T·b+k],
// so one pointer walks the whole group (for one token this is the plain
// layout). d has tileScalePad floats of padding, as the kernels load a
// group's scales eight at a time. corr mirrors qs byte for byte with the
// 16 pair sums 8·(x[2i]+x[2i+1]) of each block, which turn the unsigned
// Q4_0 nibble products into (q−8)·x without a sign trick (the VNNI tiles'
// arithmetic, q4_0Tile1x1Exact). cq, laid out and padded like d, holds
// each block's −8·dx·Σx: the AVX2 Q4_0 kernels take the nibble products
// as they are and subtract the offset once per (row, token) as
// Σ_b dw·cq[b] (tile_amd64.h, Q4PROD). Where biased,
// qs holds x+128 as unsigned bytes instead, the operand order of the VNNI
// kernels.
type q8Tiles struct {
	n, cols, nb int
	qs          []int8
	d           []float32
	corr        []int16
	cq          []float32
	biased      bool
	hasCQ       bool      // cq holds the offset corrections (prepareFor)
	c8, c4, c16 []int32   // the packed kernels' block corrections (blockSums)
	ms          []float32 // d_x·Σx per block, for Q5_1's minimums (blockSums)
	sums        []int32   // Σx of each block, as quantised (in d's order)

	tokStart, tokSize []int32 // each token's tile group (prepareSplit)

	// The prepareSplit in progress (its input and which passes it makes),
	// and its passes bound once as method values: closures handed to the
	// worker pool are allocated on every call, and a decode step is to
	// allocate nothing.
	x                   []float32
	withCQ, withSums    bool
	quantiseFn, chunkFn func(lo, hi int)
}

const tileScalePad = 16

// tiledMulRows is the tiled product for Q8_0 and Q4_0 weights, nil where
// the assembly kernels are not in use (the per-token row dots serve then).
var tiledMulRows func(dst []float32, w Matrix, p *q8Tiles, lo, hi int)

// tileBiased reports whether prepare stores the activations biased for the
// VNNI tile kernels (set once at start-up; tests switch it between calls).
var tileBiased bool

// tiledType reports whether w's products go through tiledMulRows.
func tiledType(t gguf.GGMLType) bool {
	return tiledMulRows != nil && (t == gguf.Q8_0 || t == gguf.Q4_0)
}

// tileGroups calls fn for each token group of an n-token product: the
// fewest groups of at most maxTileTokens, the larger ones first, so that
// no group is much smaller than the others (a small group pays a weight
// block's expansion for few products).
func tileGroups(n int, fn func(t0, size int)) { tokenGroups(n, maxTileTokens, fn) }

// tokenGroups is tileGroups for groups of at most most tokens.
func tokenGroups(n, most int, fn func(t0, size int)) {
	g := (n + most - 1) / most
	t0 := 0
	for i := range g {
		size := n / g
		if i < n%g {
			size++
		}
		fn(t0, size)
		t0 += size
	}
}

// prepareFor is prepare that leaves out the Q4_0 offset corrections (cq)
// when withCQ is false and the packed kernels are in use: only the one-row
// tiles read them, for matrices without a packed form and rows past a
// matrix's last whole group, and at 2–3 % of a ten-stream decode step's
// CPU, on the calling goroutine while the other workers wait, they are
// worth computing only for the products that read them (corrections adds
// them later).
func (p *q8Tiles) prepareFor(x []float32, cols, n int, withCQ bool) {
	p.prepareSplit(x, cols, n, tileBiased && n > 1 && !tilePacked, withCQ || !tilePacked, tilePacked)
}

// corrections computes the offset corrections prepareFor left out: chunk i
// of the whole buffer, whatever its token group, has its values at
// qs[32i:] and its scale at d[i] (prepareSplit), so one pass covers them.
func (p *q8Tiles) corrections() {
	if p.hasCQ {
		return
	}
	blocks := p.n * p.nb
	blockCorrections(p.cq[:blocks], p.qs[:blocks*QK8_0], p.d[:blocks])
	p.hasCQ = true
}

// prepareParallelValues is the activation count from which prepareSplit
// spreads its passes over the worker pool. Below it the passes run on the
// calling goroutine: two parallel regions cost 2–4 µs, what ten tokens of
// 288 values take to quantise. Above it, left on the caller, they were the
// serial part of every product: 0.7 ns a value when this was measured (0.45
// since the quantiser rounds and sums in fewer instructions), 36 µs for ten
// tokens of a 4 864-wide down projection and ~100 µs for a 256-token
// prompt's 576-wide product while the other workers waited.
const prepareParallelValues = 16 << 10

// prepareParallelMin is prepareParallelValues, which tests raise to compare
// the split passes with the serial ones.
var prepareParallelMin = prepareParallelValues

// SetPrepareSplit spreads large activation passes over the worker pool
// (on, the default) or keeps them on the caller (off), for benchmarks that
// compare the two in one process. It must not be called while products
// run.
func SetPrepareSplit(on bool) {
	prepareParallelMin = prepareParallelValues
	if !on {
		prepareParallelMin = math.MaxInt
	}
}

// prepareSplit quantises x into p (prepareBiasedCQ) and, with sums, adds
// the packed kernels' block sums (blockSums). Each token's blocks are
// quantised alone and each later pass reads and writes one 32-value chunk
// at a time (in the tiled layout, chunk i of the whole buffer has its
// values at qs[32i:], its scale at d[i] and its corrections at cq[i] and
// c8[i] …), so large inputs are split over the worker pool, tokens first
// and then chunks, with the same bits as one goroutine doing it all.
func (p *q8Tiles) prepareSplit(x []float32, cols, n int, biased, withCQ, sums bool) {
	nb := cols / QK8_0
	p.n, p.cols, p.nb = n, cols, nb
	p.qs = grow(p.qs, n*cols)
	p.d = grow(p.d, n*nb+tileScalePad)
	p.corr = grow(p.corr, n*cols/2)
	p.cq = grow(p.cq, n*nb+tileScalePad)
	p.sums = grow(p.sums, n*nb)
	if sums {
		blocks := n * nb
		p.c8, p.c4, p.c16, p.ms = grow(p.c8, blocks), grow(p.c4, blocks), grow(p.c16, blocks), grow(p.ms, blocks)
	}
	// Token t's tile group starts at token tokStart[t] and has tokSize[t]
	// tokens.
	p.tokStart, p.tokSize = grow(p.tokStart, n), grow(p.tokSize, n)
	tileGroups(n, func(t0, T int) {
		for k := range T {
			p.tokStart[t0+k], p.tokSize[t0+k] = int32(t0), int32(T)
		}
	})
	if p.quantiseFn == nil {
		p.quantiseFn, p.chunkFn = p.quantiseRange, p.chunkRange
	}
	p.x, p.withCQ, p.withSums, p.biased = x, withCQ, sums, biased
	if n*cols < prepareParallelMin {
		p.quantiseRange(0, n)
		p.chunkRange(0, n*nb)
	} else {
		workers.parallel(n, n*cols, 0, p.quantiseFn)
		workers.parallel(n*nb, n*cols, 0, p.chunkFn)
	}
	p.x = nil
	p.hasCQ = withCQ
}

// quantiseRange quantises tokens [lo, hi) of the prepareSplit in progress.
func (p *q8Tiles) quantiseRange(lo, hi int) {
	cols, nb := p.cols, p.nb
	for t := lo; t < hi; t++ {
		// Where block 0 of token t goes, and the distance between its
		// blocks.
		t0, T := int(p.tokStart[t]), int(p.tokSize[t])
		xOff, dOff := t0*cols+QK8_0*(t-t0), t0*nb+(t-t0)
		quantizeQ8Blocks(p.x[t*cols:(t+1)*cols], p.qs[xOff:], QK8_0*T, p.d[dOff:], T, p.corr[xOff/2:], p.sums[dOff:])
	}
}

// chunkRange makes the later passes of the prepareSplit in progress over
// the 32-value chunks [lo, hi) of the whole buffer.
func (p *q8Tiles) chunkRange(lo, hi int) {
	if p.withCQ {
		blockCorrections(p.cq[lo:hi], p.qs[lo*QK8_0:hi*QK8_0], p.d[lo:hi])
	}
	if p.withSums {
		p.blockSumsRange(lo, hi)
	}
	if p.biased {
		biasBytes(p.qs[lo*QK8_0 : hi*QK8_0])
	}
}

// blockCorrections writes −8·d[i]·Σx of each quantised block i of qs (the
// 32 values qs[32i:32i+32], whatever their token) to c[i]: −8 times an
// integer sum is exact in a float32, so only the product with d rounds.
func blockCorrections(c []float32, qs []int8, d []float32) {
	w := unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(qs))), len(c)*QK8_0/8)
	for i := range c {
		c[i] = d[i] * float32(-8*blockSum(w[4*i:4*i+4]))
	}
}

// biasBytes adds 128 to every int8 of q, turning it into the unsigned byte
// x+128 (flipping the top bit), eight bytes at a time: cols is a whole
// number of 32-value blocks.
func biasBytes(q []int8) {
	w := unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(q))), len(q)/8)
	for i := range w {
		w[i] ^= 0x8080808080808080
	}
	for i := 8 * len(w); i < len(q); i++ {
		q[i] ^= -128
	}
}

// quantizeQ8Blocks quantises the blocks of x: block b's values go to
// qs[b·qStep:], its scale to d[b·dStep], its pair sums to
// corr[b·qStep/2:] and the sum of its values to sums[b·dStep]. Assembly
// replaces it where available.
var quantizeQ8Blocks = quantizeQ8BlocksGo

func quantizeQ8BlocksGo(x []float32, qs []int8, qStep int, d []float32, dStep int, corr []int16, sums []int32) {
	for b := 0; b < len(x)/QK8_0; b++ {
		o := b * qStep
		q := qs[o : o+QK8_0]
		d[b*dStep] = quantizeQ8Block(q, x[b*QK8_0:(b+1)*QK8_0])
		c := corr[o/2 : o/2+QK8_0/2]
		var sum int32
		for i := range c {
			c[i] = 8 * (int16(q[2*i]) + int16(q[2*i+1]))
			sum += int32(q[2*i]) + int32(q[2*i+1])
		}
		sums[b*dStep] = sum
	}
}

// blockSum is the sum of the 32 int8 values of one quantised block, given
// as its four 8-byte words (byteSum).
func blockSum(w []uint64) int32 { return byteSum(w[:4]) }

// byteSum is the sum of the int8 values in the words of w (at most 32
// words): a SWAR reduction that biases each byte to unsigned (x+128), adds
// the bytes pairwise into four 16-bit lanes (at most 2·255 per word each,
// no carries between lanes), sums the lanes with one multiply and takes the
// bias back out.
func byteSum(w []uint64) int32 {
	const lo8 = 0x00ff00ff00ff00ff
	var s uint64
	for _, v := range w {
		v ^= 0x8080808080808080
		s += v&lo8 + (v>>8)&lo8
	}
	return int32((s*0x0001000100010001)>>48) - 128*8*int32(len(w))
}
