package tokenizer

import "unicode"

// The pre-tokenizers below are hand-written scanners equivalent to the
// regular expressions named in their comments. Go's regexp has no
// look-ahead, and the scanners reproduce llama.cpp's custom splitters
// (unicode_regex_split_custom_gpt2 / _llama3) decision for decision,
// including how \s+(?!\S) behaves at the end of a region. Each returns the
// end offset (in runes) of every word.

type runeClass uint8

const (
	classOther runeClass = iota
	classLetter
	classNumber
	classSpace
	classNone // outside the region: matches nothing
)

func classify(r rune) runeClass {
	switch {
	case r < 0x80:
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
			return classLetter
		case r >= '0' && r <= '9':
			return classNumber
		case r == ' ' || (r >= '\t' && r <= '\r'):
			return classSpace
		}
		return classOther
	case unicode.IsLetter(r):
		return classLetter
	case unicode.IsNumber(r):
		return classNumber
	case unicode.IsSpace(r):
		return classSpace
	}
	return classOther
}

// region gives bounds-checked access to one span of runes.
type region struct {
	r   []rune
	end int
}

func (g region) class(i int) runeClass {
	if i >= g.end {
		return classNone
	}
	return classify(g.r[i])
}

func (g region) at(i int) rune {
	if i >= g.end {
		return -1
	}
	return g.r[i]
}

func asciiLower(r rune) rune {
	if r >= 'A' && r <= 'Z' {
		return r + 'a' - 'A'
	}
	return r
}

// contraction returns the length of 's|'t|'re|'ve|'m|'ll|'d at pos (0 if
// none); foldCase makes it case-insensitive, as in the llama-3 pattern.
func contraction(g region, pos int, foldCase bool) int {
	if g.at(pos) != '\'' || pos+1 >= g.end {
		return 0
	}
	low := func(r rune) rune {
		if foldCase {
			return asciiLower(r)
		}
		return r
	}
	n1 := low(g.at(pos + 1))
	if n1 == 's' || n1 == 't' || n1 == 'm' || n1 == 'd' {
		return 2
	}
	if pos+2 < g.end {
		n2 := low(g.at(pos + 2))
		if (n1 == 'r' && n2 == 'e') || (n1 == 'v' && n2 == 'e') || (n1 == 'l' && n2 == 'l') {
			return 3
		}
	}
	return 0
}

// splitGPT2 implements
// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
func splitGPT2(runes []rune) []int {
	return appendGPT2(nil, runes, 0, len(runes))
}

func appendGPT2(ends []int, runes []rune, start, end int) []int {
	g := region{r: runes, end: end}
	for pos := start; pos < end; {
		if n := contraction(g, pos, false); n > 0 {
			pos += n
			ends = append(ends, pos)
			continue
		}
		c := g.class(pos)
		c2 := c
		if g.at(pos) == ' ' {
			c2 = g.class(pos + 1)
		}
		if c2 == classLetter || c2 == classNumber || c2 == classOther {
			// One optional space, then a run of the same class.
			if g.at(pos) == ' ' {
				pos++
			}
			for g.class(pos) == c2 {
				pos++
			}
			ends = append(ends, pos)
			continue
		}
		spaces := 0
		for g.class(pos+spaces) == classSpace {
			spaces++
		}
		if spaces > 1 && pos+spaces < end {
			// \s+(?!\S): leave the last space to prefix the next word.
			pos += spaces - 1
		} else if spaces > 0 {
			pos += spaces
		} else {
			pos++
		}
		ends = append(ends, pos)
	}
	return ends
}

// splitLlama3 implements the Llama-3 pattern
// (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
// ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
func splitLlama3(runes []rune) []int { return splitLlama3Digits(runes, 3) }

// splitQwen2 is the Llama-3 pattern with single digits (\p{N}).
func splitQwen2(runes []rune) []int { return splitLlama3Digits(runes, 1) }

func splitLlama3Digits(runes []rune, maxDigits int) []int {
	var ends []int
	g := region{r: runes, end: len(runes)}
	end := len(runes)
	for pos := 0; pos < end; {
		if n := contraction(g, pos, true); n > 0 {
			pos += n
			ends = append(ends, pos)
			continue
		}
		cpt := g.at(pos)
		c := g.class(pos)
		// [^\r\n\p{L}\p{N}]?\p{L}+
		if cpt != '\r' && cpt != '\n' && c != classNumber {
			if c == classLetter || g.class(pos+1) == classLetter {
				pos++
				for g.class(pos) == classLetter {
					pos++
				}
				ends = append(ends, pos)
				continue
			}
		}
		// \p{N}{1,maxDigits}
		if c == classNumber {
			n := 0
			for g.class(pos) == classNumber {
				pos++
				n++
				if n == maxDigits {
					ends = append(ends, pos)
					n = 0
				}
			}
			if n > 0 {
				ends = append(ends, pos)
			}
			continue
		}
		// ?[^\s\p{L}\p{N}]+[\r\n]*
		c2 := c
		if cpt == ' ' {
			c2 = g.class(pos + 1)
		}
		if c2 == classOther {
			if cpt == ' ' {
				pos++
			}
			for g.class(pos) == classOther {
				pos++
			}
			for r := g.at(pos); r == '\r' || r == '\n'; r = g.at(pos) {
				pos++
			}
			ends = append(ends, pos)
			continue
		}
		spaces, lastNewline := 0, 0
		for g.class(pos+spaces) == classSpace {
			if r := g.at(pos + spaces); r == '\r' || r == '\n' {
				lastNewline = pos + spaces + 1
			}
			spaces++
		}
		switch {
		case lastNewline > 0: // \s*[\r\n]+
			pos = lastNewline
		case spaces > 1 && pos+spaces < end: // \s+(?!\S)
			pos += spaces - 1
		case spaces > 0: // \s+
			pos += spaces
		default:
			pos++
		}
		ends = append(ends, pos)
	}
	return ends
}

// splitDigitsThenGPT2 is the SmolLM/StarCoder pre-tokenizer: every digit is
// a word of its own (\p{N}), and the runs between digits are split with the
// GPT-2 pattern, each run scanned as a separate region.
func splitDigitsThenGPT2(runes []rune) []int {
	var ends []int
	start := 0
	for i, r := range runes {
		if classify(r) != classNumber {
			continue
		}
		if i > start {
			ends = appendGPT2(ends, runes, start, i)
		}
		ends = append(ends, i+1)
		start = i + 1
	}
	if start < len(runes) {
		ends = appendGPT2(ends, runes, start, len(runes))
	}
	return ends
}
