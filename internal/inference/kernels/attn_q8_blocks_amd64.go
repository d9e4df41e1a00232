//go:build !purego

package kernels

//go:generate python3 gen_attn_q8_blocks.py .

// The blocked-key score kernels (attn_q8_blocks_amd64.s) for passes of one,
// two and three heads: head j's queries are hd bytes after head j-1's, its
// correction and multiplier the next int32 and float32, its scores ostride
// bytes after. k and ks start at the block holding the first position,
// lane0 is that position's lane in it, n the positions, vdelta the
// distance in bytes from the keys to the value rows prefetched with them; the caller
// guarantees n ≥ 1, hd a multiple of sixteen and whole blocks in k and ks.

//go:noescape
func attnScoresQ8BlocksX1(out *float32, ostride int, q *int8, qc *int32, qm *float32, k *int8, ks *float32, hd, lane0, n, vdelta int)

//go:noescape
func attnScoresQ8BlocksX2(out *float32, ostride int, q *int8, qc *int32, qm *float32, k *int8, ks *float32, hd, lane0, n, vdelta int)

//go:noescape
func attnScoresQ8BlocksX3(out *float32, ostride int, q *int8, qc *int32, qm *float32, k *int8, ks *float32, hd, lane0, n, vdelta int)

var q8BlockScores = [3]func(out *float32, ostride int, q *int8, qc *int32, qm *float32, k *int8, ks *float32, hd, lane0, n, vdelta int){
	attnScoresQ8BlocksX1, attnScoresQ8BlocksX2, attnScoresQ8BlocksX3,
}

func attnScoresQ8BlocksAsm(scores []float32, ostride int, q []int8, qc []int32, qm []float32, keys []int8, ks []float32, hd, lane0, n, vdelta int) {
	g := len(qc)
	for j0 := 0; j0 < g; {
		np := q8Pass(j0, g)
		q8BlockScores[np-1](&scores[j0*ostride/4], ostride, &q[j0*hd], &qc[j0], &qm[j0], &keys[0], &ks[0], hd, lane0, n, vdelta)
		j0 += np
	}
}
