//go:build !purego

package kernels

import "os"

// valueBlocksChosen is the value layout the AVX-512 VNNI family takes.
var valueBlocksChosen = chooseValueBlocks(os.Getenv(KVValuesEnv), amdFamily())

//go:generate python3 gen_attn_q8_vsums.py .

// The blocked-value weighted-sum kernels (attn_q8_vsums_amd64.s) for one
// head's column slice of R vectors (16·R values): v is the first block's
// values at the slice's column (quads hd4 = 4·hd bytes apart), vs its value
// scales, lane0 the first position's lane in it, n the positions, w the
// head's n weights. They set the slice of out. The caller guarantees n ≥ 1
// and whole blocks in v and vs.

//go:noescape
func attnSumsQ8BlocksR1(out *float32, w *float32, v *int8, vs *float32, hd4, lane0, n int)

//go:noescape
func attnSumsQ8BlocksR2(out *float32, w *float32, v *int8, vs *float32, hd4, lane0, n int)

//go:noescape
func attnSumsQ8BlocksR3(out *float32, w *float32, v *int8, vs *float32, hd4, lane0, n int)

//go:noescape
func attnSumsQ8BlocksR4(out *float32, w *float32, v *int8, vs *float32, hd4, lane0, n int)

// storeValueQuadAVX512 stores a value row into its quad (attn_q8_vstore_amd64.s).
//
//go:noescape
func storeValueQuadAVX512(quad *int8, src *int8, hd, k int)

func storeValueQuadAsm(quad, src []int8, k int) { storeValueQuadAVX512(&quad[0], &src[0], len(src), k) }

// attnWeightedSumQ8BlocksAsm runs the kernels head by head, each over the
// head in slices of up to 64 values.
func attnWeightedSumQ8BlocksAsm(out, w []float32, values []int8, vscale []float32, hd, lane0, n int) {
	hd4, vs := 4*hd, &vscale[0]
	for j := range len(out) / hd {
		wp := &w[j*n]
		for c0 := 0; c0 < hd; c0 += 64 {
			o, v := &out[j*hd+c0], &values[4*c0]
			// Direct calls, as for the scores: through a function value
			// the arguments would escape.
			switch min(hd-c0, 64) / 16 {
			case 1:
				attnSumsQ8BlocksR1(o, wp, v, vs, hd4, lane0, n)
			case 2:
				attnSumsQ8BlocksR2(o, wp, v, vs, hd4, lane0, n)
			case 3:
				attnSumsQ8BlocksR3(o, wp, v, vs, hd4, lane0, n)
			case 4:
				attnSumsQ8BlocksR4(o, wp, v, vs, hd4, lane0, n)
			}
		}
	}
}
