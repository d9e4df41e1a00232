package kernels

import (
	"runtime"
	"testing"
)

// A FreeList hands back the buffers put in it, after garbage collections
// too, keeps no more than its capacity and makes a new buffer when empty.
func TestFreeListKeepsThroughCollections(t *testing.T) {
	l := make(FreeList[[]byte], 2)
	a, b, c := l.Get(), l.Get(), l.Get()
	if a == b || b == c || a == c {
		t.Fatal("an empty list handed out one buffer twice")
	}
	l.Put(a)
	l.Put(b)
	l.Put(c) // over capacity: dropped
	runtime.GC()
	runtime.GC()
	got := map[*[]byte]bool{l.Get(): true, l.Get(): true}
	if !got[a] || !got[b] {
		t.Fatalf("after two collections the list gave %v, want the two kept buffers %p %p", got, a, b)
	}
	if d := l.Get(); d == a || d == b || d == c {
		t.Fatal("an emptied list handed out a buffer it had given away")
	}
}
