package model

import "partnerapi/internal/inference/kernels"

// A sequence's KV cache holds, per layer, the keys and the values of every
// position as IEEE half floats, llama.cpp's default KV type: decode reads
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
// 10-stream 135M step (BenchmarkAttnDecodeStep, measured both ways).

// minKVPositions is the smallest cache, in positions, a sequence allocates.
const minKVPositions = 16

// reserveKV makes room for need positions in every layer's cache, growing
// it geometrically (never beyond the context) so that short sequences in a
// long context do not pay for the whole window up front.
func (s *Sequence) reserveKV(need int) {
	if need <= s.kvCap {
		return
	}
	capPos := min(max(need, 2*s.kvCap, minKVPositions), max(s.maxCtx, need))
	for l := range s.k {
		s.k[l] = s.copyKV(s.k[l], s.kvCap, s.pos, capPos)
		s.v[l] = s.copyKV(s.v[l], s.kvCap, s.pos, capPos)
	}
	s.kvCap = capPos
}

// copyKV returns a new cache of capPos positions per KV head holding the
// first n positions of cache, a cache of oldCap positions per head.
func (s *Sequence) copyKV(cache []uint16, oldCap, n, capPos int) []uint16 {
	if capPos == 0 {
		return nil
	}
	hd := s.m.HeadDim
	c := make([]uint16, s.m.NHeadKV*capPos*hd)
	for h := range s.m.NHeadKV {
		copy(c[h*capPos*hd:(h*capPos+n)*hd], cache[h*oldCap*hd:(h*oldCap+n)*hd])
	}
	return c
}

// storeKV writes rows (KVDim-wide float rows, one per position from pos on)
// into a layer's cache; reserveKV has made room.
func (s *Sequence) storeKV(cache []uint16, rows []float32, pos int) {
	hd, KV := s.m.HeadDim, s.m.KVDim()
	for t := range len(rows) / KV {
		for h := range s.m.NHeadKV {
			at := (h*s.kvCap + pos + t) * hd
			kernels.FloatsToHalves(cache[at:at+hd], rows[t*KV+h*hd:t*KV+(h+1)*hd])
		}
	}
}

// cloneKV returns a copy of s holding its first n positions, with a cache of
// exactly n positions (it grows on the next step like any other).
func (s *Sequence) cloneKV(n int) *Sequence {
	c := s.m.NewSequence(s.maxCtx)
	c.pos, c.kvCap = n, n
	for l := range s.k {
		c.k[l] = s.copyKV(s.k[l], s.kvCap, n, n)
		c.v[l] = s.copyKV(s.v[l], s.kvCap, n, n)
	}
	return c
}

// KVBytes is the memory held by the sequence's KV cache (its capacity, not
// just the used part).
func (s *Sequence) KVBytes() int64 {
	var n int64
	for l := range s.k {
		n += int64(cap(s.k[l])+cap(s.v[l])) * 2 // half floats
	}
	return n
}

// Release drops the KV cache so that its memory can be reclaimed at once,
// even while something still refers to the Sequence; the sequence is empty
// afterwards and grows a new cache if used again.
func (s *Sequence) Release() {
	for l := range s.k {
		s.k[l], s.v[l] = nil, nil
	}
	s.pos, s.kvCap = 0, 0
}

// ClonePrefix returns an independent copy of the first n tokens of the
// sequence (all of them when n ≥ Pos): a prompt prefix cached for one request
// is shared with the next this way.
func (s *Sequence) ClonePrefix(n int) *Sequence { return s.cloneKV(min(max(n, 0), s.pos)) }

// Clone returns an independent copy of the sequence, KV cache included: the
// n choices of one request share the prompt this way.
func (s *Sequence) Clone() *Sequence { return s.cloneKV(s.pos) }
