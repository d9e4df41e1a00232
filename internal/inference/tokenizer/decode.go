package tokenizer

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// buildPieces precomputes the output bytes of every token, following
// llama.cpp's token_to_piece with special=false: control and unknown tokens
// print nothing, user-defined tokens print their text verbatim, SPM normal
// tokens turn U+2581 back into spaces, SPM byte tokens print their byte, and
// BPE normal tokens are mapped back through the GPT-2 byte table.
func (t *Tokenizer) buildPieces() {
	t.pieces = make([][]byte, len(t.tokens))
	for id, text := range t.tokens {
		switch t.types[id] {
		case TypeUserDefined:
			t.pieces[id] = []byte(text)
		case TypeNormal:
			if t.kind == KindSPM {
				t.pieces[id] = []byte(strings.ReplaceAll(text, "\u2581", " "))
			} else {
				t.pieces[id] = bpeBytes(text)
			}
		case TypeByte:
			if t.kind == KindSPM {
				if b, ok := parseByteToken(text); ok {
					t.pieces[id] = []byte{b}
				}
			}
		}
	}
}

// parseByteToken reads "<0xNN>".
func parseByteToken(s string) (byte, bool) {
	if len(s) != 6 || !strings.HasPrefix(s, "<0x") || s[5] != '>' {
		return 0, false
	}
	v, err := strconv.ParseUint(s[3:5], 16, 8)
	if err != nil {
		return 0, false
	}
	return byte(v), true
}

// bpeBytes maps a byte-level BPE token back to raw bytes. Characters outside
// the GPT-2 table (added tokens typed normal) are kept as their UTF-8.
func bpeBytes(s string) []byte {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if b, ok := runeToByte[r]; ok {
			out = append(out, b)
		} else {
			out = utf8.AppendRune(out, r)
		}
	}
	return out
}

// Piece returns the raw bytes token id contributes to decoded text: nothing
// for control and unknown tokens, a single byte for byte tokens (which may
// be part of a multi-byte character). The slice must not be modified.
func (t *Tokenizer) Piece(id int) []byte {
	if id < 0 || id >= len(t.pieces) {
		return nil
	}
	return t.pieces[id]
}

// Decode converts ids back to text, skipping BOS, EOS and other control
// tokens. With the SPM space prefix, the leading space of the first piece
// is dropped, undoing what Encode added, so Decode(Encode(s)) == s for
// text the vocabulary can represent. The result is the raw bytes the tokens
// spell, which is invalid UTF-8 only when the ids split a character.
func (t *Tokenizer) Decode(ids []int) string {
	var b []byte
	atStart := true
	for _, id := range ids {
		p := t.Piece(id)
		if len(p) == 0 {
			continue
		}
		if atStart {
			p = t.stripPrefixSpace(p)
			atStart = false
		}
		b = append(b, p...)
	}
	return string(b)
}

func (t *Tokenizer) stripPrefixSpace(p []byte) []byte {
	if t.kind == KindSPM && t.addSpacePrefix && len(p) > 0 && p[0] == ' ' {
		return p[1:]
	}
	return p
}

// StreamDecoder turns ids into text one at a time, holding back the bytes of
// a character split across byte tokens until it is complete, so that every
// string it returns is valid UTF-8.
type StreamDecoder struct {
	t       *Tokenizer
	pending []byte
	atStart bool
}

// NewStreamDecoder returns a decoder whose concatenated output equals
// Decode of the same ids (for valid UTF-8): the SPM prefix space of the
// first piece is dropped, which is what a chat reply wants.
func (t *Tokenizer) NewStreamDecoder() *StreamDecoder {
	return &StreamDecoder{t: t, atStart: true}
}

// NewContinuationDecoder returns a stream decoder for text that continues
// an existing prompt: it keeps the leading space of the first piece, since
// " upon" after "Once" must not become "upon".
func (t *Tokenizer) NewContinuationDecoder() *StreamDecoder {
	return &StreamDecoder{t: t}
}

// Add feeds one id and returns the text that became complete ("" when the
// id is a control token or ends mid-character).
func (d *StreamDecoder) Add(id int) string {
	p := d.t.Piece(id)
	if len(p) == 0 {
		return ""
	}
	if d.atStart {
		p = d.t.stripPrefixSpace(p)
		d.atStart = false
	}
	d.pending = append(d.pending, p...)
	cut := completePrefix(d.pending)
	if cut == 0 {
		return ""
	}
	s := strings.ToValidUTF8(string(d.pending[:cut]), "\uFFFD")
	d.pending = append(d.pending[:0], d.pending[cut:]...)
	return s
}

// Flush returns bytes still held back, as U+FFFD when they never completed a
// character, and resets the decoder's buffer.
func (d *StreamDecoder) Flush() string {
	if len(d.pending) == 0 {
		return ""
	}
	s := strings.ToValidUTF8(string(d.pending), "\uFFFD")
	d.pending = d.pending[:0]
	return s
}

// completePrefix returns the length of b without a trailing incomplete (but
// so far valid) UTF-8 sequence. Invalid bytes count as complete: waiting
// would never fix them.
func completePrefix(b []byte) int {
	for back := 1; back <= utf8.UTFMax-1 && back <= len(b); back++ {
		i := len(b) - back
		if !utf8.RuneStart(b[i]) {
			continue
		}
		if !utf8.FullRune(b[i:]) {
			return i
		}
		return len(b)
	}
	return len(b)
}
