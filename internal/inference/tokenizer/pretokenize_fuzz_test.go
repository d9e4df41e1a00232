package tokenizer

import (
	"slices"
	"testing"
)

// FuzzPreTokenizers holds the hand-written scanners to the regular
// expressions they implement, transcribed below alternative by alternative
// the way a backtracking engine tries them (first alternative that matches
// wins; a greedy quantifier gives back one rune at a time). Character
// classes are classify's, so the property is about the scanning, not about
// which runes are letters. Chat text from any client reaches these.
func FuzzPreTokenizers(f *testing.F) {
	for _, s := range []string{
		"", "Hello world", "  x", "a  \n\n b", "'s 'S 're", "don't", "12345 678", "x1y22z333w4444", "\r\n\r\n  \t",
		"!!! ?? .", "Cửa Việt 🦙", " \u00a0\u3000x", "a\n \nb", "  ", "\t'll", "x  ", ".\n\n", "1 2  3",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		// Words are decided a few runes at a time, so 256 bytes show every
		// case; a longer input only stalls the run, its coverage tied to
		// its length, while the minimizer tries its ~n²/2 substrings.
		if len(s) > 256 {
			return
		}
		runes := []rune(s)
		for _, c := range []struct {
			name  string
			split func([]rune) []int
			ref   func([]rune, int, int) int
		}{
			{"gpt2", splitGPT2, refGPT2},
			{"llama3", splitLlama3, func(r []rune, pos, end int) int { return refLlama3(r, pos, end, 3) }},
			{"qwen2", splitQwen2, func(r []rune, pos, end int) int { return refLlama3(r, pos, end, 1) }},
		} {
			var want []int
			for pos := 0; pos < len(runes); {
				pos = c.ref(runes, pos, len(runes))
				want = append(want, pos)
			}
			if got := c.split(runes); !slices.Equal(got, want) {
				t.Fatalf("%s %q: scanner ends %v, pattern %v", c.name, s, got, want)
			}
		}
		// SmolLM: every \p{N} alone, the runs between them by GPT-2.
		var want []int
		start := 0
		for i := 0; i <= len(runes); i++ {
			if i < len(runes) && classify(runes[i]) != classNumber {
				continue
			}
			for pos := start; pos < i; {
				pos = refGPT2(runes, pos, i)
				want = append(want, pos)
			}
			if i < len(runes) {
				want = append(want, i+1)
			}
			start = i + 1
		}
		if got := splitDigitsThenGPT2(runes); !slices.Equal(got, want) {
			t.Fatalf("smollm %q: scanner ends %v, pattern %v", s, got, want)
		}
	})
}

// refRun is the end of the run of runes from pos on that in accepts.
func refRun(r []rune, pos, end int, in func(rune) bool) int {
	for pos < end && in(r[pos]) {
		pos++
	}
	return pos
}

func isClass(c runeClass) func(rune) bool { return func(r rune) bool { return classify(r) == c } }

func isCRLF(r rune) bool { return r == '\r' || r == '\n' }

// refContraction matches 's|'t|'re|'ve|'m|'ll|'d at pos, ASCII letter case
// folded when fold is set; it returns the length, 0 for none.
func refContraction(r []rune, pos, end int, fold bool) int {
	if r[pos] != '\'' {
		return 0
	}
	for _, suf := range []string{"s", "t", "re", "ve", "m", "ll", "d"} {
		if pos+1+len(suf) > end {
			continue
		}
		ok := true
		for i, b := range []rune(suf) {
			got := r[pos+1+i]
			if fold {
				got = asciiLower(got)
			}
			if got != b {
				ok = false
				break
			}
		}
		if ok {
			return 1 + len(suf)
		}
	}
	return 0
}

// refSpaces matches \s+(?!\S)|\s+ at pos: the white space run, less its
// last rune when a non-space follows and the run is longer than one.
func refSpaces(r []rune, pos, end int) int {
	k := refRun(r, pos, end, isClass(classSpace))
	if k == pos {
		return pos
	}
	if k < end && k-pos > 1 {
		return k - 1
	}
	return k
}

// refGPT2 is the end of the GPT-2 word at pos:
// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
func refGPT2(r []rune, pos, end int) int {
	if n := refContraction(r, pos, end, false); n > 0 {
		return pos + n
	}
	for _, c := range []runeClass{classLetter, classNumber, classOther} {
		p := pos
		if r[p] == ' ' && p+1 < end {
			p++
		}
		if k := refRun(r, p, end, isClass(c)); k > p {
			return k
		}
		if k := refRun(r, pos, end, isClass(c)); k > pos {
			return k
		}
	}
	return refSpaces(r, pos, end)
}

// refLlama3 is the end of the Llama-3 word at pos (Qwen2 with maxDigits 1):
// (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
// ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
func refLlama3(r []rune, pos, end, maxDigits int) int {
	if n := refContraction(r, pos, end, true); n > 0 {
		return pos + n
	}
	letter := isClass(classLetter)
	if c := classify(r[pos]); !isCRLF(r[pos]) && c != classLetter && c != classNumber && pos+1 < end && letter(r[pos+1]) {
		return refRun(r, pos+1, end, letter)
	}
	if k := refRun(r, pos, end, letter); k > pos {
		return k
	}
	if k := refRun(r, pos, min(end, pos+maxDigits), isClass(classNumber)); k > pos {
		return k
	}
	other := isClass(classOther)
	p := pos
	if r[p] == ' ' && p+1 < end && other(r[p+1]) {
		p++
	}
	if k := refRun(r, p, end, other); k > p {
		return refRun(r, k, end, isCRLF)
	}
	// \s*[\r\n]+: \s* gives back runes until a line break follows it.
	k := refRun(r, pos, end, isClass(classSpace))
	for m := k - 1; m >= pos; m-- {
		if isCRLF(r[m]) {
			return refRun(r, m, end, isCRLF)
		}
	}
	return refSpaces(r, pos, end)
}
