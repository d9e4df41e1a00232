package tokenizer

import "strings"

// fragment is either a run of raw text (token < 0) or one special token.
type fragment struct {
	text  string
	token int32
}

// partition splits text around special-token texts, mirroring llama.cpp's
// tokenizer_st_partition: each special token in turn (longest first) is
// searched in every remaining text fragment, left to right, without overlap.
// Control and unknown tokens only take part when parseSpecial is set;
// user-defined tokens always do.
func (t *Tokenizer) partition(text string, parseSpecial bool) []fragment {
	frags := []fragment{{text: text, token: -1}}
	for _, id := range t.special {
		ty := t.types[id]
		if !parseSpecial && (ty == TypeControl || ty == TypeUnknown) {
			continue
		}
		tok := t.tokens[id]
		// A cheap pre-check keeps the common case (no specials) from
		// rebuilding the fragment list for each of up to hundreds of tokens.
		found := false
		for _, f := range frags {
			if f.token < 0 && strings.Contains(f.text, tok) {
				found = true
				break
			}
		}
		if !found {
			continue
		}
		next := make([]fragment, 0, len(frags)+4)
		for _, f := range frags {
			if f.token >= 0 {
				next = append(next, f)
				continue
			}
			next = t.splitOn(f.text, id, next)
		}
		frags = next
	}
	return frags
}

// splitOn appends the pieces of s around every occurrence of token id,
// applying the token's rstrip rule. (llama.cpp also has lstrip, but sets it
// only for BERT-style <mask> tokens, which these tokenizers do not serve.)
func (t *Tokenizer) splitOn(s string, id int32, out []fragment) []fragment {
	tok := t.tokens[id]
	for {
		i := strings.Index(s, tok)
		if i < 0 {
			break
		}
		if left := s[:i]; left != "" {
			out = append(out, fragment{text: left, token: -1})
		}
		out = append(out, fragment{token: id})
		s = s[i+len(tok):]
		if t.rstrip[id] {
			s = strings.TrimLeftFunc(s, isCSpace)
		}
	}
	if s != "" {
		out = append(out, fragment{text: s, token: -1})
	}
	return out
}

// isCSpace is C's isspace in the "C" locale, which llama.cpp uses for
// stripping: ASCII whitespace only.
func isCSpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\v', '\f', '\r':
		return true
	}
	return false
}
