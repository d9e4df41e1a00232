//go:build !purego

package kernels

import "math"

//go:generate python3 gen_attn_q8_blocks.py .

// The blocked-key score kernels (attn_q8_blocks_amd64.s) for passes of one,
// two and three heads: head j's queries are hd bytes after head j-1's, its
// scores ostride bytes after; qcm holds per query block b the pass's
// corrections (int32, at 24·b + 4·j) and multipliers (float32, at 24·b + 12
// + 4·j). k and ks start at the block holding the first position, lane0 is
// that position's lane in it, n the positions, vdelta the distance in bytes
// from the keys to the value rows prefetched with them. The caller
// guarantees n ≥ 1, hd a multiple of sixteen, at most 256, and whole
// blocks in k and ks.

//go:noescape
func attnScoresQ8BlocksX1(out *float32, ostride int, q *int8, qcm *uint32, k *int8, ks *float32, hd, lane0, n, vdelta int)

//go:noescape
func attnScoresQ8BlocksX2(out *float32, ostride int, q *int8, qcm *uint32, k *int8, ks *float32, hd, lane0, n, vdelta int)

//go:noescape
func attnScoresQ8BlocksX3(out *float32, ostride int, q *int8, qcm *uint32, k *int8, ks *float32, hd, lane0, n, vdelta int)

func attnScoresQ8BlocksAsm(scores []float32, ostride int, qq *queryQ8, keys []int8, ks []float32, hd, lane0, n, vdelta int) {
	g := len(qq.q) / hd
	var qcm [8 * 6]uint32
	for j0 := 0; j0 < g; {
		np := q8Pass(j0, g)
		for b := range qq.nb {
			for jj := range np {
				qcm[6*b+jj] = uint32(qq.qc[(j0+jj)*qq.nb+b])
				qcm[6*b+3+jj] = math.Float32bits(qq.qm[(j0+jj)*qq.nb+b])
			}
		}
		// Direct calls: through a function value qcm would escape, an
		// allocation per work item.
		out, q := &scores[j0*ostride/4], &qq.q[j0*hd]
		switch np {
		case 1:
			attnScoresQ8BlocksX1(out, ostride, q, &qcm[0], &keys[0], &ks[0], hd, lane0, n, vdelta)
		case 2:
			attnScoresQ8BlocksX2(out, ostride, q, &qcm[0], &keys[0], &ks[0], hd, lane0, n, vdelta)
		default:
			attnScoresQ8BlocksX3(out, ostride, q, &qcm[0], &keys[0], &ks[0], hd, lane0, n, vdelta)
		}
		j0 += np
	}
}
