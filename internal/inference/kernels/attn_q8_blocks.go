package kernels

import (
	"encoding/binary"
	"unsafe"
)

// The int8 key cache in blocks, for the AVX-512 VNNI family. Over row-major
// keys (hd bytes a position) a score is a dot product along the row, and
// the kernels spent more instructions summing lanes horizontally and
// converting bytes to floats than multiplying: 13–15 % of a ten-stream
// decode step's CPU for stories15M and SmolLM2-135M on a Zen 5 host. In
// blocks, lanes are positions: block b of a head holds positions 16b …
// 16b+15, chunk c of it (64 bytes at c·64) the key bytes 4c … 4c+3 of each
// of the sixteen positions (position 16b+i at 4i). One VPDPBUSD then
// multiplies a chunk by four query bytes broadcast to every lane, and a
// block's sixteen scores come out of hd/4 of them with no horizontal sum.
// Measured on the Zen 5 host: one score call over 256 positions of a
// 48-value head took 104 ns against 350 over row-major keys with one query
// scale a head, 180 ns with a scale per 32 values (below), and the
// attention of a ten-stream decode step (BenchmarkAttnQ8DecodeStep, scores,
// softmax and weighted sums) went from 0.89–0.90 of the half-precision
// cache's time to 0.69–0.70 (0.71 with the scales per 32 values) for both
// the 15M and the 135M shape. The kernel also prefetches the value rows of
// the positions it scores: without that the step's attention took
// 0.74–0.88 of the half-precision time.
//
// VPDPBUSD multiplies unsigned bytes by signed ones, so the keys are
// stored +128 (k XOR 0x80) and the query is the signed side: a head's query
// is rounded to int8 in blocks of 32 values (the last one 16 for heads of
// 48), each with its own scale (absmax / 127, as QuantizeKVRow rounds cache
// rows) — llama.cpp likewise rounds the query to Q8_0 to take its product
// with a q8_0 key cache. One scale for a whole head cost accuracy: on the
// synthetic 135M and 15M attention shapes the logits then strayed from the
// F16 cache's by up to 2.9 and 3.0 % of their range over 30 greedy steps,
// against 2.3 and 2.4 % with blocks of 32 and 2.2 and 2.5 % for the AVX2
// kernels, which do not round the query. Each block's integer sum starts at
// −128·Σq (of that block) to take the bias out and is exact; the score is
// (Σ_b float32(sum_b) · (block scale · scale)) · key scale, the blocks
// added in order from zero, in the kernel and in attnScoresQ8BlocksGo
// alike, so the two agree bit for bit.
//
// The layout only permutes bytes within a block, so a head's cache keeps
// its size; caches are allocated in whole blocks (KVCapacity) so that a
// kernel may read a whole last block. Which layout the cache has is fixed
// when the kernels are chosen (keyBlocks); the caches of a process are all
// written and read with it.

// keyBlock is the positions of a key block.
const keyBlock = 16

// keyBlocks reports whether the int8 key cache is in blocks (set with the
// kernels at start-up; tests switch it with the kernel family).
var keyBlocks bool

// blockedKeys reports whether a head of hd values keeps its keys in blocks:
// a chunk is four values, so heads whose size is not a multiple of four
// (no model in use has one) stay row-major.
func blockedKeys(hd int) bool { return keyBlocks && hd%4 == 0 }

// blockScoresVec reports whether the vector kernel over blocked keys,
// attnScoresQ8BlocksAsm, is in use. It is called directly rather than
// through a function variable: a call through a variable makes the query
// buffers below escape, and a heap allocation per call cost six times the
// kernel's own time.
var blockScoresVec bool

// KVCapacity is the positions a KV cache for need positions is allocated
// with: need rounded up to whole key blocks.
func KVCapacity(need int) int { return (need + keyBlock - 1) / keyBlock * keyBlock }

// StoreKeyQ8 rounds the key row of position p to int8 and stores it and
// its scale in one KV head's key cache (keys and kscale from position
// zero), in the layout the kernels in use read.
func StoreKeyQ8(keys []int8, kscale []float32, p int, row []float32) {
	hd := len(row)
	if !blockedKeys(hd) {
		kscale[p] = QuantizeKVRow(keys[p*hd:(p+1)*hd], row)
		return
	}
	sc := q8Scratch.Get()
	defer q8Scratch.Put(sc)
	sc.grow(1, hd)
	StoreKeyQ8With(keys, kscale, p, row, sc.q)
}

// StoreKeyQ8With is StoreKeyQ8 rounding through the caller's scratch tmp
// (at least len(row) values) instead of a buffer from the shared free list.
// A decode step stores a key per KV head, row and layer, both cores at
// once: for ten stories15M streams that is 360 calls a step, and the free
// list's channel, contended by the two cores, took 12 % of the step's CPU
// on an Intel model 167 host (BenchmarkTenStreamCPU's profile).
func StoreKeyQ8With(keys []int8, kscale []float32, p int, row []float32, tmp []int8) {
	hd := len(row)
	if !blockedKeys(hd) {
		kscale[p] = QuantizeKVRow(keys[p*hd:(p+1)*hd], row)
		return
	}
	tmp = tmp[:hd]
	kscale[p] = QuantizeKVRow(tmp, row)
	blk := keys[p/keyBlock*keyBlock*hd:][:keyBlock*hd]
	lane := 4 * (p % keyBlock)
	// Four bytes at a time (one store; a byte at a time took 1.8 % of a
	// ten-stream 15M step's CPU): a position's four bytes of a chunk are
	// its own, so the store never touches those of a position another
	// worker may be storing.
	for c := 0; c < hd/4; c++ {
		v := binary.LittleEndian.Uint32(unsafe.Slice((*byte)(unsafe.Pointer(&tmp[4*c])), 4))
		binary.LittleEndian.PutUint32(unsafe.Slice((*byte)(unsafe.Pointer(&blk[64*c+lane])), 4), v^0x80808080)
	}
}

// queryQ8 is the int8 form of a group's queries for the blocked kernels:
// each head's values, and per head and block of queryBlock values (head j's
// block b at j·nb+b) the correction −128·Σq and the multiplier (block
// scale · score scale).
type queryQ8 struct {
	nb int
	q  []int8
	qc []int32
	qm []float32
}

// queryBlock is the values of a query block: Q8_0's.
const queryBlock = 32

// q8Scratch holds queryQ8 buffers for reuse: QuantizeKVRow reaches its
// kernels through function variables, so buffers on the stack would escape
// and cost an allocation per call.
var q8Scratch = make(FreeList[queryQ8], 8)

// grow sizes the buffers for g heads of hd values.
func (qq *queryQ8) grow(g, hd int) {
	qq.nb = (hd + queryBlock - 1) / queryBlock
	if cap(qq.q) < g*hd {
		qq.q = make([]int8, g*hd)
	}
	if n := g * qq.nb; cap(qq.qc) < n {
		qq.qc, qq.qm = make([]int32, n), make([]float32, n)
	}
	qq.q, qq.qc, qq.qm = qq.q[:g*hd], qq.qc[:g*qq.nb], qq.qm[:g*qq.nb]
}

func (qq *queryQ8) set(q []float32, hd int, scale float32) {
	g := len(q) / hd
	for j := range g {
		for b := range qq.nb {
			lo, hi := j*hd+b*queryBlock, j*hd+min((b+1)*queryBlock, hd)
			qb := qq.q[lo:hi]
			d := QuantizeKVRow(qb, q[lo:hi])
			// The block's sum eight bytes at a time (byteSum), any last
			// bytes one by one: the loop a value at a time cost as much
			// as the rounding.
			s := byteSum(unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(qb))), len(qb)/8))
			for _, v := range qb[len(qb)/8*8:] {
				s += int32(v)
			}
			qq.qc[j*qq.nb+b], qq.qm[j*qq.nb+b] = -128*s, d*scale
		}
	}
}

// attnScoresQ8Blocks computes the scores of AttnScoresGroupQ8 over blocked
// keys: the queries rounded to int8, then the kernel (or its Go mirror).
func attnScoresQ8Blocks(scores, q []float32, keys []int8, kscale []float32, values []int8, hd, from, span int, scale float32, qq *queryQ8) {
	g := len(q) / hd
	if qq == nil {
		qq = q8Scratch.Get()
		defer q8Scratch.Put(qq)
	}
	qq.grow(g, hd)
	qq.set(q, hd, scale)
	// The kernel reads whole blocks: from the one holding from to the one
	// holding the last position.
	b0, b1 := from/keyBlock, (from+span+keyBlock-1)/keyBlock
	keys, kscale = keys[b0*keyBlock*hd:b1*keyBlock*hd], kscale[b0*keyBlock:b1*keyBlock]
	lane0 := from - b0*keyBlock
	if blockScoresVec && hd%groupVecMinDim == 0 && hd <= 8*queryBlock {
		// The value rows of a position are at the same offset from the
		// head's start as its key block: only an address for PREFETCHT0.
		vdelta := 0
		if len(values) >= b1*keyBlock*hd {
			vdelta = int(uintptr(unsafe.Pointer(&values[0]))-uintptr(unsafe.Pointer(&keys[0]))) + b0*keyBlock*hd
		}
		attnScoresQ8BlocksAsm(scores, span*4, qq, keys, kscale, hd, lane0, span, vdelta)
		return
	}
	attnScoresQ8BlocksGo(scores, span, *qq, keys, kscale, hd, lane0, span)
}

// attnScoresQ8BlocksGo is the kernel's arithmetic in Go: head j's score of
// position lane0+p of the blocks at scores[j·stride+p].
func attnScoresQ8BlocksGo(scores []float32, stride int, qq queryQ8, keys []int8, kscale []float32, hd, lane0, n int) {
	for j := range len(qq.q) / hd {
		for p := range n {
			l := lane0 + p
			blk := keys[l/keyBlock*keyBlock*hd:]
			var s float32
			for b := range qq.nb {
				sum := qq.qc[j*qq.nb+b]
				for d := b * queryBlock; d < min((b+1)*queryBlock, hd); d++ {
					k := uint8(blk[64*(d/4)+4*(l%keyBlock)+d%4])
					sum += int32(k) * int32(qq.q[j*hd+d])
				}
				// The conversion keeps the product rounded on its own,
				// as VMULPS then VADDPS round it (no fused multiply-add).
				s += float32(float32(sum) * qq.qm[j*qq.nb+b])
			}
			scores[j*stride+p] = s * kscale[l]
		}
	}
}
