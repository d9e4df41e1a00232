//go:build !purego

package kernels

import (
	"math"
	"os"
)

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

// The same kernels prefetching the keys and the values into the L2
// (PREFETCHT1) instead of the L1, chosen on Zen 4 (AMD family 19h, whose
// AVX-512 parts are all Zen 4). Measured there (EPYC family 19h model 11h,
// 2026-11-30 08:40–08:55 UTC, two cores shared with other sessions at a
// load average of 4–15), decode steps in one process alternating the two
// step by step (BenchmarkKVPrefetchL2SideBySide, process CPU a step, L1 ÷
// L2): ten 15M streams 1.08–1.13× (Q8_0 and Q4_0, -cpu 1, three runs
// each; wall at the median step 1.08–1.14×), 1.07–1.11× with both cores
// (wall 1.03–1.12×); ten 135M streams 1.05–1.06× (wall 1.04–1.13×); one
// stream 0.99–1.02× (15M; with both cores, the pool's spinning included,
// 0.95–1.02×, wall 1.00–1.02×) and 1.01–1.05× (135M). Among variants timed the
// same way on the ten-stream 15M step (CPU against the L1 set): keys 2 KB
// ahead and values into the L2 0.90–0.91×, keys 4 KB ahead 0.91–0.92×, the
// keys alone into the L2 0.94–0.95×, no value prefetch at all 0.96–0.99×,
// keys 4 or 8 KB ahead into the L1 1.01–1.04×. As with the Q8_0 weights'
// prefetch (tile_packed_l2_amd64.go), filling the L1 from the step's many
// streams costs Zen 4 more than it brings; the weighted sum takes the
// values from the L2 with its own prefetches. Other CPUs keep the L1 set
// until measured. KVPrefetchEnv overrides the choice ("l1" or "l2"), for
// comparing the two on another CPU with `partnerapi bench engine`.
const KVPrefetchEnv = "PARTNERAPI_KV_PREFETCH"

// scoresPrefetchL2 reports whether the blocked score kernels prefetch into
// the L2 (set once at start-up; SetKVPrefetchL2 switches it for
// benchmarks).
var scoresPrefetchL2 = choosePrefetchL2(os.Getenv(KVPrefetchEnv), amdFamily())

// SetKVPrefetchL2 makes the blocked score kernels prefetch the keys and
// values into the L2 (on) or the L1 (off), for benchmarks that compare the
// two in one process, and reports the previous setting. It must not be
// called while attention runs.
func SetKVPrefetchL2(on bool) (was bool) {
	was, scoresPrefetchL2 = scoresPrefetchL2, on
	return was
}

// KVPrefetch names where the int8 cache's score kernels in use prefetch the
// keys and values: "L2" or "L1" for the AVX-512 VNNI family's blocked
// kernels, "L1" for the AVX2 family's, "none" without vector kernels.
func KVPrefetch() string {
	switch {
	case attnScoresQ8Vec == nil:
		return "none"
	case blockScoresVec && scoresPrefetchL2:
		return "L2"
	}
	return "L1"
}

//go:noescape
func attnScoresQ8BlocksL2X1(out *float32, ostride int, q *int8, qcm *uint32, k *int8, ks *float32, hd, lane0, n, vdelta int)

//go:noescape
func attnScoresQ8BlocksL2X2(out *float32, ostride int, q *int8, qcm *uint32, k *int8, ks *float32, hd, lane0, n, vdelta int)

//go:noescape
func attnScoresQ8BlocksL2X3(out *float32, ostride int, q *int8, qcm *uint32, k *int8, ks *float32, hd, lane0, n, vdelta int)

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
		switch {
		case scoresPrefetchL2 && np == 1:
			attnScoresQ8BlocksL2X1(out, ostride, q, &qcm[0], &keys[0], &ks[0], hd, lane0, n, vdelta)
		case scoresPrefetchL2 && np == 2:
			attnScoresQ8BlocksL2X2(out, ostride, q, &qcm[0], &keys[0], &ks[0], hd, lane0, n, vdelta)
		case scoresPrefetchL2:
			attnScoresQ8BlocksL2X3(out, ostride, q, &qcm[0], &keys[0], &ks[0], hd, lane0, n, vdelta)
		case np == 1:
			attnScoresQ8BlocksX1(out, ostride, q, &qcm[0], &keys[0], &ks[0], hd, lane0, n, vdelta)
		case np == 2:
			attnScoresQ8BlocksX2(out, ostride, q, &qcm[0], &keys[0], &ks[0], hd, lane0, n, vdelta)
		default:
			attnScoresQ8BlocksX3(out, ostride, q, &qcm[0], &keys[0], &ks[0], hd, lane0, n, vdelta)
		}
		j0 += np
	}
}
