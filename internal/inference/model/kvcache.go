package model

import (
	"fmt"
	"runtime"

	"partnerapi/internal/inference/kernels"
)

// A sequence's KV cache holds, per layer, the keys and the values of every
// position as IEEE half floats (KVF16), llama.cpp's default KV type, or as
// int8 with one scale per head row (KVQ8, see below): decode reads
// the whole cache of every sequence for every token, and with ten streams
// those reads match the weight bytes, so halving them matters more than the
// precision (keys and values are rounded once; scores and sums stay
// float32).
//
// The layout is head-major: KV head h's rows for positions 0 … kvCap-1 are
// contiguous (HeadDim values each) at h·kvCap·HeadDim. Attention reads one
// KV head's rows for all positions, and a contiguous stream is what the
// hardware prefetcher follows at full speed; position-major rows, where a
// group's 128 bytes sit in every KVDim-wide row, took 1.75× as long for a
// 10-stream 135M step (BenchmarkAttnDecodeStep, measured both ways). The
// int8 cache has the same layout, its row scales at h·kvCap + position,
// except that with the AVX-512 VNNI kernels a head's keys and values are
// permuted within blocks of sixteen positions (kernels/attn_q8_blocks.go,
// kernels/attn_q8_vblocks.go), which only kernels.StoreKeyQ8 and
// kernels.StoreValueQ8With write and only the kernels read; kvCap is a
// whole number of such blocks (kernels.KVCapacity) for every cache type.

// KVType is the element type of a sequence's KV cache.
type KVType uint8

const (
	// KVDefault is DefaultKVType() at the time a sequence is made.
	KVDefault KVType = iota
	// KVF16 keeps keys and values as IEEE half floats.
	KVF16
	// KVQ8 keeps each head row of a position as HeadDim int8 values and
	// one float32 scale (kernels.QuantizeKVRow), HeadDim + 4 bytes instead
	// of 2·HeadDim: ten 15M streams read ~22 MB of half-precision KV per
	// decode step at ~320 positions, more than the 16 MB of Q8_0 weights,
	// and llama.cpp offers q8_0 K/V caches for the same reason. The values
	// are rounded to 1/254 of their row's largest magnitude, as Q8_0
	// weights are.
	KVQ8
)

// DefaultKVType is the cache type of KVDefault: KVQ8 where its vector
// kernels exist (the avx512 and avx2 families), else KVF16, whose Go
// kernels are faster than the int8 cache's. Measured in one process, a
// decode step of each type alternating (BenchmarkKVSideBySide, 256–384
// cached positions, on a loaded host): on the AVX-512 host ten 15M or 135M
// streams took 8–17 % more tokens per second over the int8 cache, a single
// stream −3 to +11 % (median +4 %); on the AVX2-only Zen 3 host `bench
// engine` alternating the two types (medians of 5–7 rounds each) decoded
// ten streams 13 % (15M) and 11 % (135M) faster over the int8 cache, a
// single 15M stream 18 % faster and a single 135M stream alike within the
// noise. What it costs: stories260K, fed 1 600 tokens of greedy
// half-precision continuations, picked the same next token at 98.75 % of
// them over the int8 cache (mean KL divergence 8.9e-4 nats), against
// 98.56 % (4.9e-4) for Q8_0 weights instead of F32 over the same cache; a
// free-running greedy story may therefore take another turn after a few
// tokens, as with any change of rounding.
func DefaultKVType() KVType {
	if kernels.Int8KVVector() {
		return KVQ8
	}
	return KVF16
}

// String is the name ParseKVType accepts.
func (t KVType) String() string {
	switch t {
	case KVF16:
		return "f16"
	case KVQ8:
		return "q8"
	}
	return "default"
}

// ParseKVType reads a KV cache type name: "f16", "q8", or "default" (or
// "") for KVDefault.
func ParseKVType(s string) (KVType, error) {
	switch s {
	case "", "default":
		return KVDefault, nil
	case "f16":
		return KVF16, nil
	case "q8":
		return KVQ8, nil
	}
	return 0, fmt.Errorf("model: unknown KV cache type %q (f16, q8, default)", s)
}

// minKVPositions is the smallest cache, in positions, a sequence allocates.
const minKVPositions = 16

// reserveKV makes room for need positions in every layer's cache, growing
// it geometrically (never beyond the context) so that short sequences in a
// long context do not pay for the whole window up front.
func (s *Sequence) reserveKV(need int) {
	if need <= s.kvCap {
		return
	}
	capPos := kernels.KVCapacity(min(max(need, 2*s.kvCap, minKVPositions), max(s.maxCtx, need)))
	s.copyCaches(s, s.pos, capPos)
}

// Reserve makes room for n positions (at most the sequence's context) at
// once. A request that knows its length (its prompt and max_tokens) takes
// its whole cache when it joins instead of growing it by doubling: each
// growth copied the cache in the middle of a step the other streams
// waited for, and ten streams of one prompt length grew in the same step.
// A reservation of up to populateMax bytes is backed at once (kvpool.go).
func (s *Sequence) Reserve(n int) {
	if n = min(n, s.maxCtx); n > s.kvCap {
		s.copyCaches(s, s.pos, n)
	}
}

// copyCaches moves s to a cache (a slab from the model's pool) with room
// for at least capPos positions per KV head, holding the first n positions
// of src's (src may be s, whose old slab then goes back to the pool).
func (s *Sequence) copyCaches(src *Sequence, n, capPos int) {
	H, hd, oldCap := s.m.NHeadKV, s.m.HeadDim, src.kvCap
	if capPos <= 0 {
		s.Release()
		return
	}
	slab := s.m.getSlab(s.kvType, kernels.KVCapacity(capPos))
	c, newCap := &slab.carving, slab.capPos
	// Keys and int8 values are copied in whole blocks (both capacities
	// are whole blocks); the rows past n in the last block are never read
	// before they are written.
	nk := min(kernels.KVCapacity(n), oldCap)
	if n > 0 {
		for l := range s.m.NLayer {
			if s.kvType == KVQ8 {
				copyHeads(c.kq[l], src.kq[l], H, hd, oldCap, nk, newCap)
				copyHeads(c.vq[l], src.vq[l], H, hd, oldCap, nk, newCap)
				copyHeads(c.ks[l], src.ks[l], H, 1, oldCap, n, newCap)
				copyHeads(c.vs[l], src.vs[l], H, 1, oldCap, n, newCap)
			} else {
				copyHeads(c.k[l], src.k[l], H, hd, oldCap, n, newCap)
				copyHeads(c.v[l], src.v[l], H, hd, oldCap, n, newCap)
			}
		}
	}
	s.dropSlab()
	s.slab, s.kvCarving, s.kvCap = slab, *c, newCap
	// A sequence dropped without Release still gives its memory back: a
	// mapped slab is not the collector's to free.
	s.slabCleanup = runtime.AddCleanup(s, s.m.kvPool.put, slab)
}

// dropSlab gives s's slab, if any, back to the pool.
func (s *Sequence) dropSlab() {
	if s.slab != nil {
		s.slabCleanup.Stop()
		s.m.kvPool.put(s.slab)
		s.slab = nil
	}
}

// copyHeads copies the first n positions of each of heads heads from cache
// (oldCap positions a head, width values a position) to dst (capPos
// positions a head).
func copyHeads[T any](dst, cache []T, heads, width, oldCap, n, capPos int) {
	for h := range heads {
		copy(dst[h*capPos*width:(h*capPos+n)*width], cache[h*oldCap*width:(h*oldCap+n)*width])
	}
}

// storeKV writes the key and value rows k and v of layer l (KVDim-wide
// float rows, one per position from pos on) into its caches; reserveKV has
// made room. tmp is the caller's scratch of at least HeadDim values, for
// rounding the int8 cache's rows; it must not be shared with another
// goroutine storing at the same time.
func (s *Sequence) storeKV(l int, k, v []float32, pos int, tmp []int8) {
	hd, KV, c := s.m.HeadDim, s.m.KVDim(), s.kvCap
	for t := range len(k) / KV {
		for h := range s.m.NHeadKV {
			at := (h*c + pos + t) * hd
			kr, vr := k[t*KV+h*hd:t*KV+(h+1)*hd], v[t*KV+h*hd:t*KV+(h+1)*hd]
			if s.kvType == KVQ8 {
				kernels.StoreKeyQ8With(s.kq[l][h*c*hd:(h+1)*c*hd], s.ks[l][h*c:(h+1)*c], pos+t, kr, tmp)
				kernels.StoreValueQ8With(s.vq[l][h*c*hd:(h+1)*c*hd], s.vs[l][h*c:(h+1)*c], pos+t, vr, tmp)
			} else {
				kernels.FloatsToHalves(s.k[l][at:at+hd], kr)
				kernels.FloatsToHalves(s.v[l][at:at+hd], vr)
			}
		}
	}
}

// kvRows is one KV head's cached rows of one layer from some position on,
// in whichever element type the sequence's cache holds: what attention
// reads (attention.go). The half-precision rows start at that position;
// the int8 ones at position zero of the head, with from the first one read
// (blocked keys cannot be sliced at any position).
type kvRows struct {
	hd, from int
	k16, v16 []uint16
	k8, v8   []int8
	ks, vs   []float32
}

// rows returns layer l's rows of KV head h from position from on.
func (s *Sequence) rows(l, h, from int) kvRows {
	hd, c := s.m.HeadDim, s.kvCap
	at := (h*c + from) * hd
	if s.kvType == KVQ8 {
		kb, ke := h*c*hd, (h+1)*c*hd
		return kvRows{hd: hd, from: from, k8: s.kq[l][kb:ke], v8: s.vq[l][kb:ke], ks: s.ks[l][h*c : (h+1)*c], vs: s.vs[l][h*c : (h+1)*c]}
	}
	return kvRows{hd: hd, k16: s.k[l][at:], v16: s.v[l][at:]}
}

// scores sets sc[j·n+p] to the scaled score of query head j of q over the
// first n rows; qs is the caller's scratch for the int8 cache's queries.
func (r *kvRows) scores(sc, q []float32, n int, scale float32, qs *kernels.QueryScratch) {
	if r.k8 != nil {
		kernels.AttnScoresGroupQ8With(sc, q, r.k8, r.ks, r.v8, r.hd, r.from, n, scale, qs)
		return
	}
	kernels.AttnScoresGroup(sc, q, r.k16, r.v16, r.hd, n, r.hd, 0, scale)
}

// weightedSum sets each head j of out to the sum of the first n value rows
// weighted by w[j·n:(j+1)·n].
func (r *kvRows) weightedSum(out, w []float32, n int) {
	if r.v8 != nil {
		kernels.AttnWeightedSumQ8At(out, w, r.v8, r.vs, r.hd, r.from, n)
		return
	}
	kernels.AttnWeightedSumGroup(out, w, r.v16, r.hd, n, r.hd, 0)
}

// cloneKV returns a copy of s holding its first n positions, with a cache of
// exactly n positions (it grows on the next step like any other) of the
// same type, in a context of maxCtx tokens (as NewSequence takes it; n is
// cut to fit).
func (s *Sequence) cloneKV(n, maxCtx int) *Sequence {
	c := s.m.newSequence(maxCtx, s.kvType)
	n = min(n, c.maxCtx)
	c.pos = n
	c.copyCaches(s, n, n)
	return c
}

// KVBytes is the memory held by the sequence's KV cache (its capacity, not
// just the used part).
func (s *Sequence) KVBytes() int64 {
	if s.slab == nil {
		return 0
	}
	return int64(len(s.slab.buf))
}

// KVBytesPerPosition is what one cached position of a sequence occupies over
// all layers' keys and values in a cache of type t (KVDefault:
// DefaultKVType()): what attention reads per position of every sequence in
// every decode step, on top of the weights.
func (m *Model) KVBytesPerPosition(t KVType) int64 {
	if t == KVDefault {
		t = DefaultKVType()
	}
	perLayer := int64(2 * m.KVDim() * 2) // keys and values, half floats
	if t == KVQ8 {
		perLayer = int64(2 * (m.KVDim() + 4*m.NHeadKV)) // int8 values and a float32 scale per head row
	}
	return int64(m.NLayer) * perLayer
}

// Release gives the KV cache back to the model's pool (kvpool.go), for the
// next sequence to reuse, even while something still refers to the
// Sequence; the sequence is empty afterwards and takes a new cache if used
// again. Nothing may read the released cache: the next owner overwrites it.
func (s *Sequence) Release() {
	s.dropSlab()
	s.kvCarving = kvCarving{}
	s.pos, s.kvCap = 0, 0
}

// ClonePrefix returns an independent copy of the first n tokens of the
// sequence (all of them when n ≥ Pos): a prompt prefix cached for one request
// is shared with the next this way.
func (s *Sequence) ClonePrefix(n int) *Sequence { return s.ClonePrefixIn(n, s.maxCtx) }

// ClonePrefixIn is ClonePrefix into a sequence of another context size,
// maxCtx tokens as NewSequence takes it; a prefix longer than that context
// is cut to it. A prefix cached by a request with a small context window
// is reused by one with a large window, which must not inherit the small
// one, and the other way round.
func (s *Sequence) ClonePrefixIn(n, maxCtx int) *Sequence {
	return s.cloneKV(min(max(n, 0), s.pos), maxCtx)
}

// Clone returns an independent copy of the sequence, KV cache included: the
// n choices of one request share the prompt this way.
func (s *Sequence) Clone() *Sequence { return s.cloneKV(s.pos, s.maxCtx) }
