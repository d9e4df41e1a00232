package model

import (
	"slices"
	"testing"
)

// TestKVPoolReuse checks, for both cache types, that a released cache goes
// to the model's pool and the next sequence takes it (no new slab), that a
// slab holding another sequence's keys and values decodes exactly as a
// fresh one does, that the pool never keeps more than the peak of live
// caches, and that TrimKVPool empties it.
func TestKVPoolReuse(t *testing.T) {
	for _, kt := range []KVType{KVF16, KVQ8} {
		t.Run(kt.String(), func(t *testing.T) {
			var m *Model
			withKVType(t, kt, func() { m = openModel(t, "stories260K.gguf") })
			// The reference: a fresh slab, never released.
			ref := m.NewSequence(0)
			want := greedy(t, ref, storiesPrompt, 40, true)

			// Another prompt fills a slab of the same capacity (64
			// positions: 5 + 40 tokens grow 16 → 32 → 64) with other keys
			// and values.
			other := m.NewSequence(0)
			greedy(t, other, []int{1, 300, 301, 302, 303, 304, 305}, 40, false)
			if other.kvCap != ref.kvCap {
				t.Fatalf("capacities %d and %d, want equal", other.kvCap, ref.kvCap)
			}
			used := other.slab
			live := m.kvPool.live
			other.Release()
			if m.PooledKVBytes() < int64(len(used.buf)) || m.kvPool.live != live-int64(len(used.buf)) {
				t.Fatalf("after release: pooled %d, live %d (was %d), slab %d bytes", m.PooledKVBytes(), m.kvPool.live, live, len(used.buf))
			}

			// The next sequence takes the smallest pooled slab with room
			// at each growth and ends in the released one.
			seq := m.NewSequence(0)
			if got := greedy(t, seq, storiesPrompt, 40, true); !slices.Equal(got, want) {
				t.Errorf("on a reused cache %v,\nwant %v", got, want)
			}
			if seq.slab != used {
				t.Errorf("the sequence did not take the released slab")
			}
			if p := m.kvPool; p.pooled+p.live > p.peak {
				t.Errorf("pooled %d + live %d > peak %d", p.pooled, p.live, p.peak)
			}
			ref.Release()
			seq.Release()
			if p := m.kvPool; p.live != 0 || p.pooled > p.peak {
				t.Errorf("all released: live %d, pooled %d, peak %d", p.live, p.pooled, p.peak)
			}
			pooled := m.PooledKVBytes()
			if n := m.TrimKVPool(); n != pooled || n == 0 || m.PooledKVBytes() != 0 {
				t.Errorf("trim returned %d of %d pooled, %d left", n, pooled, m.PooledKVBytes())
			}
		})
	}
}

// TestKVPoolTakesNearestFit checks the pool's choice: the smallest pooled
// slab of the type with room, else a new one of the size asked for.
func TestKVPoolTakesNearestFit(t *testing.T) {
	m := openModel(t, "stories260K.gguf")
	slabs := map[int]*kvSlab{}
	for _, c := range []int{16, 64, 128} {
		slabs[c] = m.getSlab(KVQ8, c)
	}
	f16 := m.getSlab(KVF16, 32)
	for _, s := range slabs {
		m.kvPool.put(s)
	}
	m.kvPool.put(f16)
	for _, tc := range []struct {
		typ  KVType
		ask  int
		want int // capacity of the slab handed out; 0: a new one
	}{
		{KVQ8, 48, 64},
		{KVQ8, 16, 16},
		{KVQ8, 32, 128}, // 64 was taken above
		{KVQ8, 32, 0},
		{KVQ8, 256, 0}, // nothing large enough
		{KVF16, 32, 32},
		{KVF16, 32, 0},
	} {
		s := m.getSlab(tc.typ, tc.ask)
		reused := false
		for _, p := range slabs {
			reused = reused || p == s
		}
		reused = reused || s == f16
		switch {
		case tc.want == 0 && reused:
			t.Errorf("%v %d: took a pooled slab of %d", tc.typ, tc.ask, s.capPos)
		case tc.want != 0 && (!reused || s.capPos != tc.want):
			t.Errorf("%v %d: capacity %d (pooled: %v), want the pooled %d", tc.typ, tc.ask, s.capPos, reused, tc.want)
		}
		if s.kvType != tc.typ || s.capPos < tc.ask || len(s.buf) != m.slabBytes(tc.typ, s.capPos) {
			t.Errorf("%v %d: slab of %v, %d positions, %d bytes", tc.typ, tc.ask, s.kvType, s.capPos, len(s.buf))
		}
	}
}
