package kernels

// FreeList is a bounded free list of scratch buffers the engine reuses from
// call to call (the kernels' and the model's attention rows). A sync.Pool would do, but the garbage collector empties one
// every second cycle, after which each buffer is made and grown again: the
// engine's scratch is meant to be made once and kept, so a decode step
// allocates nothing whether or not a collection ran before it. Its capacity
// bounds what it keeps: calls beyond it running at once (engines of several
// models stepping together) make buffers of their own and drop them after.
type FreeList[T any] chan *T

// Get takes a kept buffer, or makes one when none is free.
func (l FreeList[T]) Get() *T {
	select {
	case b := <-l:
		return b
	default:
		return new(T)
	}
}

// Put keeps b for a later call, or drops it when the list is full.
func (l FreeList[T]) Put(b *T) {
	select {
	case l <- b:
	default:
	}
}
