package tokenizer

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// byteToRune is GPT-2's reversible byte→character table: printable Latin-1
// bytes stand for themselves and the other 68 are moved to U+0100 onward, so
// that every byte has a visible, non-space character in the vocabulary.
var byteToRune [256]rune

// runeToByte inverts byteToRune.
var runeToByte = map[rune]byte{}

func init() {
	next := rune(256)
	for b := 0; b < 256; b++ {
		if (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF) {
			byteToRune[b] = rune(b)
		} else {
			byteToRune[b] = next
			next++
		}
		runeToByte[byteToRune[b]] = byte(b)
	}
}

// bpeModel holds the merge table. Merge ranks are keyed by small integer ids
// of the merge sides rather than by concatenated strings, so that looking a
// pair up allocates nothing.
type bpeModel struct {
	toID         map[string]int32
	sideID       map[string]int32   // every string that appears as a merge side
	ranks        map[uint64]int32   // (left side, right side) → rank
	split        func([]rune) []int // pre-tokenizer: word end offsets in runes
	ignoreMerges bool               // llama-3: whole words in the vocab skip merging
	unknownPre   bool               // tokenizer.ggml.pre names no pattern we know
	cache        *wordCache
}

func newBPEModel(toID map[string]int32, merges []string, pre string) (*bpeModel, error) {
	m := &bpeModel{
		toID:   toID,
		sideID: make(map[string]int32, len(merges)),
		ranks:  make(map[uint64]int32, len(merges)),
		cache:  &wordCache{},
	}
	side := func(s string) int32 {
		id, ok := m.sideID[s]
		if !ok {
			id = int32(len(m.sideID))
			m.sideID[s] = id
		}
		return id
	}
	for rank, merge := range merges {
		// llama.cpp searches the separator from index 1, so a merge whose
		// left side is a space itself still parses.
		pos := -1
		if len(merge) > 1 {
			if i := strings.IndexByte(merge[1:], ' '); i >= 0 {
				pos = i + 1
			}
		}
		if pos < 0 {
			return nil, fmt.Errorf("tokenizer: merge %d %q has no separator", rank, merge)
		}
		key := uint64(side(merge[:pos]))<<32 | uint64(side(merge[pos+1:]))
		if _, dup := m.ranks[key]; !dup { // the first rank wins, as with emplace
			m.ranks[key] = int32(rank)
		}
	}
	switch {
	case isLlama3Pre(pre):
		m.split = splitLlama3
		m.ignoreMerges = true
	case pre == "smaug-bpe", pre == "dbrx":
		// llama.cpp splits these with the Llama-3 pattern but keeps BPE's
		// other defaults: merges always run and no BOS is added (Smaug's
		// Llama-3 finetunes are llama-architecture files).
		m.split = splitLlama3
	case pre == "qwen2", pre == "deepseek-r1-qwen", pre == "kormo", pre == "stablelm2":
		m.split = splitQwen2
	case pre == "smollm", pre == "starcoder", pre == "refact", pre == "command-r",
		pre == "codeshell", pre == "exaone", pre == "minerva-7b":
		m.split = splitDigitsThenGPT2
	default:
		// "gpt-2", "default", absent or unknown names: the original GPT-2
		// pattern is the most widely shared one. An unknown name (llama.cpp
		// refuses the file) is reported by UnknownPreTokenizer, since its
		// own pattern may split text otherwise and the ids then differ from
		// those the model was trained on.
		m.split = splitGPT2
		m.unknownPre = !gpt2PreNames[pre]
	}
	return m, nil
}

// gpt2PreNames are the tokenizer.ggml.pre names llama.cpp splits with the
// GPT-2 pattern ("" and "default": the key is absent or says so).
var gpt2PreNames = map[string]bool{
	"": true, "default": true, "gpt-2": true, "gpt2": true, "phi-2": true, "jina-es": true, "jina-de": true,
	"jina-v2-es": true, "jina-v2-de": true, "jina-v2-code": true, "mpt": true, "olmo": true, "jais": true,
	"trillion": true, "granite-docling": true,
}

// isLlama3Pre reports whether pre names the Llama-3 pre-tokenizer, which
// also turns on add_bos and ignore_merges in llama.cpp.
func isLlama3Pre(pre string) bool {
	switch pre {
	case "llama3", "llama-v3", "llama-bpe", "falcon3":
		return true
	}
	return false
}

// rank returns the merge rank of the pair (a, b), or -1.
func (m *bpeModel) rank(a, b string) int32 {
	l, ok := m.sideID[a]
	if !ok {
		return -1
	}
	r, ok := m.sideID[b]
	if !ok {
		return -1
	}
	if rk, ok := m.ranks[uint64(l)<<32|uint64(r)]; ok {
		return rk
	}
	return -1
}

// encodeBPE appends the ids of one raw text fragment: pre-tokenize into
// words, then merge each word independently (cached).
func (t *Tokenizer) encodeBPE(text string, out []int) []int {
	m := t.bpe
	// Invalid UTF-8 becomes U+FFFD, one per bad byte, exactly as
	// unicode_cpts_from_utf8 does.
	runes := make([]rune, 0, len(text))
	offs := make([]int, 0, len(text)+1)
	for i, r := range text {
		runes = append(runes, r)
		offs = append(offs, i)
	}
	offs = append(offs, len(text))
	start := 0
	var mapped strings.Builder
	for _, end := range m.split(runes) {
		raw := text[offs[start]:offs[end]]
		word := runes[start:end]
		start = end
		if ids, ok := m.cache.get(raw); ok {
			for _, id := range ids {
				out = append(out, int(id))
			}
			continue
		}
		mapped.Reset()
		var buf [4]byte
		for _, r := range word {
			n := utf8.EncodeRune(buf[:], r)
			for _, b := range buf[:n] {
				mapped.WriteRune(byteToRune[b])
			}
		}
		ids := m.mergeWord(mapped.String())
		if len(raw) <= maxCachedWord {
			m.cache.put(raw, ids)
		}
		for _, id := range ids {
			out = append(out, int(id))
		}
	}
	return out
}

// bpeBigram is a candidate merge; text is the merged string, compared on pop
// to detect pairs whose symbols changed since they were queued.
type bpeBigram struct {
	left, right int32
	rank        int32
	text        string
}

// before orders like llama.cpp's llm_bigram_bpe comparator: lowest rank
// first, ties to the leftmost pair.
func (a bpeBigram) before(b bpeBigram) bool {
	if a.rank != b.rank {
		return a.rank < b.rank
	}
	return a.left < b.left
}

// mergeWord runs llm_tokenizer_bpe_session's merge loop over one mapped word
// and returns its ids.
func (m *bpeModel) mergeWord(word string) []int32 {
	if m.ignoreMerges {
		if id, ok := m.toID[word]; ok {
			return []int32{id}
		}
	}
	type symbol struct {
		start, n   int32
		prev, next int32
	}
	syms := make([]symbol, 0, len(word))
	for offs := int32(0); offs < int32(len(word)); {
		n := min(utf8Len[word[offs]>>4], int32(len(word))-offs)
		idx := int32(len(syms))
		syms = append(syms, symbol{start: offs, n: n, prev: idx - 1, next: idx + 1})
		offs += n
	}
	if len(syms) == 0 {
		return nil
	}
	syms[len(syms)-1].next = -1
	text := func(i int32) string { return word[syms[i].start : syms[i].start+syms[i].n] }

	var q mergeQueue[bpeBigram]
	add := func(left, right int32) {
		if left < 0 || right < 0 {
			return
		}
		a, b := text(left), text(right)
		rk := m.rank(a, b)
		if rk < 0 {
			return
		}
		q.push(bpeBigram{left: left, right: right, rank: rk, text: word[syms[left].start : syms[left].start+int32(len(a)+len(b))]})
	}
	for i := int32(1); i < int32(len(syms)); i++ {
		add(i-1, i)
	}
	for len(q) > 0 {
		b := q.pop()
		l, r := &syms[b.left], &syms[b.right]
		if l.n == 0 || r.n == 0 || l.n+r.n != int32(len(b.text)) || l.start+l.n != r.start {
			continue
		}
		l.n += r.n
		r.n = 0
		l.next = r.next
		if r.next >= 0 {
			syms[r.next].prev = b.left
		}
		add(l.prev, b.left)
		add(b.left, l.next)
	}

	var ids []int32
	for i := int32(0); i != -1; i = syms[i].next {
		s := text(i)
		if id, ok := m.toID[s]; ok {
			ids = append(ids, id)
			continue
		}
		// A symbol outside the vocabulary is spelled byte by byte where
		// single-byte tokens exist, as llama.cpp does; others are dropped.
		for j := 0; j < len(s); j++ {
			if id, ok := m.toID[s[j:j+1]]; ok {
				ids = append(ids, id)
			}
		}
	}
	return ids
}
