package tokenizer

import "strings"

// spmSymbol is one node of the doubly linked list of symbols being merged;
// a symbol covers text[start:start+n], and n == 0 marks a symbol merged away.
type spmSymbol struct {
	start, n   int32
	prev, next int32
}

// spmBigram is a candidate merge of two adjacent symbols.
type spmBigram struct {
	left, right int32
	size        int32 // byte length of the merged text, to detect stale entries
	score       float32
}

// before orders the priority queue as llama.cpp's llm_bigram_spm
// comparator does: higher score first, ties to the leftmost pair.
func (a spmBigram) before(b spmBigram) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return a.left < b.left
}

// utf8Len is llama.cpp's unicode_len_utf8: the sequence length announced by
// a lead byte, with stray continuation bytes counted as single symbols.
var utf8Len = [16]int32{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4}

// encodeSPM appends the ids of one raw text fragment, following
// llm_tokenizer_spm_session: escape spaces as U+2581, start from UTF-8
// characters, repeatedly merge the best-scoring adjacent pair that forms a
// vocabulary token, and spell leftover symbols as byte tokens.
func (t *Tokenizer) encodeSPM(raw string, prefix bool, out []int) []int {
	if prefix {
		raw = " " + raw
	}
	text := strings.ReplaceAll(raw, " ", "\u2581")
	if text == "" {
		return out
	}
	if !t.spmWords {
		for _, id := range t.mergeSPM(text, nil) {
			out = append(out, int(id))
		}
		return out
	}
	// Cut before each run of U+2581 that follows other text, at symbol
	// boundaries (so invalid UTF-8 is cut exactly where the whole-text
	// symbols would be). With spmWords no token spans such a cut, so no
	// merge crosses it and words merge independently with the same result,
	// which lets repeated words come from the cache.
	start := 0
	prevSpace := false
	for offs := 0; offs < len(text); {
		n := min(int(utf8Len[text[offs]>>4]), len(text)-offs)
		isSpace := n == len(spaceMark) && text[offs:offs+n] == spaceMark
		if isSpace && !prevSpace && offs > start {
			out = t.encodeSPMWord(text[start:offs], out)
			start = offs
		}
		prevSpace = isSpace
		offs += n
	}
	return t.encodeSPMWord(text[start:], out)
}

// spaceMark is sentencepiece's visible space, U+2581.
const spaceMark = "\u2581"

// maxCachedWord bounds the length of cached words so that one long run of
// text without spaces cannot fill the cache with huge keys.
const maxCachedWord = 64

func (t *Tokenizer) encodeSPMWord(word string, out []int) []int {
	ids, ok := t.spmCache.get(word)
	if !ok {
		ids = t.mergeSPM(word, nil)
		if len(word) <= maxCachedWord {
			t.spmCache.put(word, ids)
		}
	}
	for _, id := range ids {
		out = append(out, int(id))
	}
	return out
}

// spmSplittable reports whether U+2581 occurs in tokens only as a leading
// run, true of Llama-2, Phi-3 and TinyStories vocabularies. Only then may
// text be cut into words before merging.
func spmSplittable(tokens []string) bool {
	for _, tok := range tokens {
		if strings.Contains(strings.TrimLeft(tok, spaceMark), spaceMark) {
			return false
		}
	}
	return true
}

// mergeSPM appends the ids of escaped text to out.
func (t *Tokenizer) mergeSPM(text string, out []int32) []int32 {
	syms := make([]spmSymbol, 0, len(text))
	for offs := int32(0); offs < int32(len(text)); {
		n := min(utf8Len[text[offs]>>4], int32(len(text))-offs)
		idx := int32(len(syms))
		syms = append(syms, spmSymbol{start: offs, n: n, prev: idx - 1, next: idx + 1})
		offs += n
	}
	syms[len(syms)-1].next = -1

	q := make(mergeQueue[spmBigram], 0, len(syms))
	tryAdd := func(left, right int32) {
		if left < 0 || right < 0 {
			return
		}
		l, r := syms[left], syms[right]
		s := text[l.start : l.start+l.n+r.n]
		id, ok := t.toID[s]
		if !ok {
			return
		}
		q.push(spmBigram{left: left, right: right, size: int32(len(s)), score: t.scores[id]})
	}
	for i := int32(1); i < int32(len(syms)); i++ {
		tryAdd(i-1, i)
	}
	for len(q) > 0 {
		b := q.pop()
		l, r := &syms[b.left], &syms[b.right]
		if l.n == 0 || r.n == 0 || l.n+r.n != b.size {
			continue
		}
		l.n += r.n
		r.n = 0
		l.next = r.next
		if r.next >= 0 {
			syms[r.next].prev = b.left
		}
		tryAdd(l.prev, b.left)
		tryAdd(b.left, l.next)
	}

	// Every merged symbol is a token by construction, so llama.cpp's
	// rev_merge re-segmentation never triggers; only unmerged characters
	// can miss the vocabulary and fall back to bytes.
	for i := int32(0); i != -1; i = syms[i].next {
		s := syms[i]
		piece := text[s.start : s.start+s.n]
		if id, ok := t.toID[piece]; ok {
			out = append(out, id)
			continue
		}
		for j := 0; j < len(piece); j++ {
			if id := t.byteToken[piece[j]]; id >= 0 {
				out = append(out, id)
			}
		}
	}
	return out
}
