package model

import (
	"runtime"
	"sync"
	"unsafe"
)

// A sequence's KV cache lives in one slab: every layer's key and value
// arrays (and the int8 cache's row scales) at one capacity, carved from a
// single allocation outside the Go heap (mapSlab). A cache that grows moves
// to a larger slab, and a released sequence gives its slab back to the
// model's pool, from which the next sequence (or the next growth) takes it.
//
// Page faults are the point. On the Zen 5 host (a KVM guest) a 4 KB page
// faulted in on first touch took ~11 µs (0.38 GB/s, against 14–22 GB/s for
// copying warm memory), and the caches were the engine's fresh memory: a
// cache that doubled was copied into new pages, and every position written
// past them touched another. `bench engine` counted 40–48 minor faults a
// decode step of ten 135M Q4_0 streams, 11.7 of ten 15M ones and 3–9 of a
// single stream; with slabs that are reused, made for the request's length
// when it joins (Reserve) and backed in one call when made (MAP_POPULATE,
// 4.3–5.6 GB/s there), 0.0–0.5. Alternating with the heap-grown caches
// over eight rounds, one-stream decode ran 1.09× (135M) and 1.14× (15M)
// faster and prefill 1.04–1.11×; ten streams measured 0.96–0.98×, within
// that host's noise (their rounds ranged ±20 %). Go's heap reuses freed
// memory too, but clears a reused span in full first, only after a
// collection finds it free, and its scavenger hands idle pages back.
//
// The pool keeps released slabs only while pooled and live slabs together
// stay within the most the model's caches have ever held at once: it never
// raises the peak, it only keeps what a load like the last one will ask for
// again (llama.cpp allocates every slot's whole context once and keeps it).
// TrimKVPool unmaps the kept slabs.

// kvSlab is the memory of one sequence's cache: positions per KV head of
// every layer, of one cache type.
type kvSlab struct {
	buf     []byte
	mapped  bool // buf is a mapping of its own (mapSlab), unmapped when dropped
	kvType  KVType
	capPos  int
	carving kvCarving
}

// kvCarving is a slab's per-layer arrays, views of its buf.
type kvCarving struct {
	k, v   [][]uint16
	kq, vq [][]int8
	ks, vs [][]float32
}

// drop hands the slab's memory back: a mapping is unmapped at once, heap
// memory is left to the collector.
func (s *kvSlab) drop() {
	if s.mapped {
		unmapSlab(s.buf)
	}
	s.buf, s.carving = nil, kvCarving{}
}

// kvPool is a model's released slabs, and the bytes its slabs hold. It is
// an object of its own, not part of the Model, so that the cleanups of a
// Model and of its Sequences can refer to it without keeping them alive.
type kvPool struct {
	mu     sync.Mutex
	free   []*kvSlab
	pooled int64 // bytes of the slabs in free
	live   int64 // bytes of the slabs handed out and not yet returned
	peak   int64 // the most live has been
	closed bool  // the Model is gone: returned slabs are dropped
}

// newKVPool returns m's pool, whose slabs are dropped once m is unreachable.
func newKVPool(m *Model) *kvPool {
	p := &kvPool{}
	runtime.AddCleanup(m, (*kvPool).close, p)
	return p
}

func (p *kvPool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	p.trim()
}

// trim drops the pooled slabs and returns how many bytes they held; p.mu
// is held.
func (p *kvPool) trim() int64 {
	n := p.pooled
	for _, s := range p.free {
		s.drop()
	}
	clear(p.free)
	p.free, p.pooled, p.peak = p.free[:0], 0, p.live
	return n
}

// slabBytes is what a slab of capPos positions of type t takes.
func (m *Model) slabBytes(t KVType, capPos int) int {
	return capPos * int(m.KVBytesPerPosition(t))
}

// getSlab returns a slab of type t with room for at least capPos positions
// per KV head: the smallest pooled one with that room (a larger one saves
// the sequence its next growths, and the memory is held anyway), or a new
// one of exactly capPos (a whole number of key blocks). Its contents are
// whatever a previous sequence left: positions are always written before
// they are read, as after Truncate.
func (m *Model) getSlab(t KVType, capPos int) *kvSlab {
	p := m.kvPool
	p.mu.Lock()
	best := -1
	for i, s := range p.free {
		if s.kvType == t && s.capPos >= capPos && (best < 0 || s.capPos < p.free[best].capPos) {
			best = i
		}
	}
	var s *kvSlab
	if best >= 0 {
		s = p.free[best]
		p.free[best] = p.free[len(p.free)-1]
		p.free[len(p.free)-1] = nil
		p.free = p.free[:len(p.free)-1]
		p.pooled -= int64(len(s.buf))
	}
	n := m.slabBytes(t, capPos)
	if s != nil {
		n = len(s.buf)
	}
	p.live += int64(n)
	p.peak = max(p.peak, p.live)
	p.mu.Unlock()
	if s == nil {
		s = m.newSlab(t, capPos)
	}
	return s
}

// put takes back a slab no sequence uses any more, keeping it while the
// pool and the live slabs stay within the peak, else dropping it.
func (p *kvPool) put(s *kvSlab) {
	n := int64(len(s.buf))
	p.mu.Lock()
	defer p.mu.Unlock()
	p.live -= n
	if !p.closed && p.pooled+n <= p.peak-p.live {
		p.free = append(p.free, s)
		p.pooled += n
		return
	}
	s.drop()
}

// TrimKVPool drops the pooled KV slabs (unmapping them) and returns how
// many bytes they held.
func (m *Model) TrimKVPool() int64 {
	p := m.kvPool
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.trim()
}

// PooledKVBytes is the memory of the released KV slabs the model keeps for
// reuse.
func (m *Model) PooledKVBytes() int64 {
	p := m.kvPool
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pooled
}

// populateMax is the largest slab backed in full when it is made: a
// request's reservation (its prompt and max_tokens) is this size or less
// for any prompt of a few thousand tokens (135M: ~5 600 positions; 0.5B:
// ~10 000), and costs ~13 ms at the guest's populate rate; a larger one
// (a request with no token limit in a long context) gets its pages as its
// positions are written, so that it does not hold the whole window.
const populateMax = 64 << 20

// newSlab allocates a slab of type t and capPos positions and carves it.
// Every array's length is a multiple of 16 bytes (capPos is a multiple of
// the 16-position key block), so the float32 views are aligned; with
// head sizes that are multiples of four, each array starts on a cache line.
func (m *Model) newSlab(t KVType, capPos int) *kvSlab {
	n := m.slabBytes(t, capPos)
	buf, mapped := mapSlab(n, n <= populateMax)
	s := &kvSlab{buf: buf, mapped: mapped, kvType: t, capPos: capPos}
	L, H, hd := m.NLayer, m.NHeadKV, m.HeadDim
	c := &s.carving
	off := 0
	take := func(n int) []byte {
		b := s.buf[off : off+n : off+n]
		off += n
		return b
	}
	rows := H * capPos * hd
	if t == KVQ8 {
		c.kq, c.vq, c.ks, c.vs = make([][]int8, L), make([][]int8, L), make([][]float32, L), make([][]float32, L)
		for l := range L {
			c.kq[l], c.vq[l] = bytesAs[int8](take(rows)), bytesAs[int8](take(rows))
			c.ks[l], c.vs[l] = bytesAs[float32](take(4*H*capPos)), bytesAs[float32](take(4*H*capPos))
		}
		return s
	}
	c.k, c.v = make([][]uint16, L), make([][]uint16, L)
	for l := range L {
		c.k[l], c.v[l] = bytesAs[uint16](take(2*rows)), bytesAs[uint16](take(2*rows))
	}
	return s
}

// bytesAs views b as a slice of T. b's start must be aligned for T; the
// view keeps b's allocation alive as b would.
func bytesAs[T int8 | uint16 | float32](b []byte) []T {
	var zero T
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/int(unsafe.Sizeof(zero)))
}
