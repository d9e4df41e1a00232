package tokenizer

// merger is a candidate merge that knows whether it goes before another:
// SPM by best score, BPE by lowest rank, both with ties to the leftmost pair.
type merger[T any] interface {
	before(T) bool
}

// mergeQueue is the binary heap both tokenizers pop merges from. It is
// written out rather than built on container/heap, whose interface calls
// cost more than the merging itself on long inputs.
type mergeQueue[T merger[T]] []T

func (q *mergeQueue[T]) push(b T) {
	h := append(*q, b)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h[i].before(h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
	*q = h
}

func (q *mergeQueue[T]) pop() T {
	h := *q
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	i := 0
	for {
		l := 2*i + 1
		if l >= len(h) {
			break
		}
		m := l
		if r := l + 1; r < len(h) && h[r].before(h[l]) {
			m = r
		}
		if !h[m].before(h[i]) {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	*q = h
	return top
}
