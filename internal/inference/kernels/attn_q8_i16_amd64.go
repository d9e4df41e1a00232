//go:build !purego

package kernels

import (
	"unsafe"
)

//go:generate python3 gen_attn_q8_i16.py .

// The integer score kernels of the AVX2 family (attn_q8_i16_amd64.s, see
// attn_q8_i16.go) for passes of one, two and three heads.

//go:noescape
func attnScoresQ8I16x1AVX2(out *float32, ostride int, q *int16, qm *float32, k *int8, ks *float32, hd, n int, vdelta int)

//go:noescape
func attnScoresQ8I16x2AVX2(out *float32, ostride int, q *int16, qm *float32, k *int8, ks *float32, hd, n int, vdelta int)

//go:noescape
func attnScoresQ8I16x3AVX2(out *float32, ostride int, q *int16, qm *float32, k *int8, ks *float32, hd, n int, vdelta int)

//go:noescape
func kvQuantize16AVX2(dst *int16, x *float32, n int, id float32)

func kvQuantize16AVX2Asm(dst []int16, x []float32, id float32) {
	kvQuantize16AVX2(&dst[0], &x[0], len(x), id)
}

// i16Scratch holds queryI16 buffers for callers without a QueryScratch:
// the score kernels are reached through a function variable, so buffers on
// their stack would escape and cost an allocation per call. The model's
// attention passes its workers' own scratch instead, because this free
// list's channel, taken by both cores for every work item, was a contended
// lock (as q8Scratch was for the AVX-512 family's blocked kernels).
var i16Scratch = make(FreeList[queryI16], 8)

// attnScoresQ8I16Asm is the AVX2 family's attnScoresQ8Vec: the queries
// rounded to int16 into qq (nil takes a buffer from i16Scratch), then the
// integer kernels in passes of up to three heads. Heads larger than
// q8I16MaxDim, and queries holding a NaN or an infinity, take the float
// kernels.
func attnScoresQ8I16Asm(scores, q []float32, keys []int8, kscale []float32, values []int8, hd, span int, scale float32, qq *queryI16) {
	if hd > q8I16MaxDim {
		attnScoresQ8Asm(scores, q, keys, kscale, values, hd, span, scale, nil)
		return
	}
	if qq == nil {
		qq = i16Scratch.Get()
		defer i16Scratch.Put(qq)
	}
	if !qq.set(q, hd, scale) {
		attnScoresQ8Asm(scores, q, keys, kscale, values, hd, span, scale, nil)
		return
	}
	g := len(q) / hd
	// The kernels prefetch the value rows at this distance from the key
	// rows; it is only an address for PREFETCHT0, never dereferenced.
	vdelta := int(uintptr(unsafe.Pointer(&values[0])) - uintptr(unsafe.Pointer(&keys[0])))
	for j0 := 0; j0 < g; {
		n := q8Pass(j0, g)
		out, qj, mj := &scores[j0*span], &qq.q[j0*hd], &qq.m[j0]
		switch n {
		case 1:
			attnScoresQ8I16x1AVX2(out, span*4, qj, mj, &keys[0], &kscale[0], hd, span, vdelta)
		case 2:
			attnScoresQ8I16x2AVX2(out, span*4, qj, mj, &keys[0], &kscale[0], hd, span, vdelta)
		default:
			attnScoresQ8I16x3AVX2(out, span*4, qj, mj, &keys[0], &kscale[0], hd, span, vdelta)
		}
		j0 += n
	}
}
