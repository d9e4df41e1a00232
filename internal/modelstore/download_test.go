package modelstore

import (
	"regexp"
	"strconv"
	"testing"
)

// contentRangeGrammar is RFC 9110 §14.4's Content-Range for the bytes
// unit: "bytes FIRST-LAST/LENGTH" or "bytes FIRST-LAST/*" as a 206
// carries it, "bytes */LENGTH" as a 416 does, digits only.
var contentRangeGrammar = regexp.MustCompile(`^bytes (?:([0-9]+)-([0-9]+)/([0-9]+|\*)|\*/([0-9]+))$`)

// FuzzParseContentRange checks parseContentRange against the grammar: it
// accepts exactly the headers the grammar allows whose first byte is not
// past their last nor their last past the length, and reads the same
// first byte and length. A resumed download continues from the first byte
// a 206 names and expects the length it gives, so a header read leniently
// ("bytes 50-60/10", "bytes 5x-9/10") would append a body at an offset the
// server never meant.
func FuzzParseContentRange(f *testing.F) {
	for _, s := range []string{
		"bytes 100000-199999/200000", // http.ServeContent, as the tests' file server answers
		"bytes */200000", "bytes 0-0/1", "bytes 5-9/*",
		"bytes 9-5/10", "bytes 50-60/10", "bytes 5x-9/10", "bytes +5-9/10", "bytes 0x5-9/10",
		"bytes 5-/10", "bytes 5-9/10abc", "bytes  5-9/10", "bytes */*", "bytes 9223372036854775808-9/10",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		start, total, ok := parseContentRange(v)
		wantStart, wantTotal, wantOK := referenceContentRange(v)
		if ok != wantOK || ok && (start != wantStart || total != wantTotal) {
			t.Fatalf("parseContentRange(%q) = %d, %d, %v; the grammar gives %d, %d, %v",
				v, start, total, ok, wantStart, wantTotal, wantOK)
		}
	})
}

// referenceContentRange reads v by contentRangeGrammar: the first byte
// (-1 for "*") and the length (-1 for "*").
func referenceContentRange(v string) (start, total int64, ok bool) {
	m := contentRangeGrammar.FindStringSubmatch(v)
	if m == nil {
		return 0, 0, false
	}
	num := func(s string) (int64, bool) {
		n, err := strconv.ParseInt(s, 10, 64)
		return n, err == nil
	}
	if m[4] != "" {
		total, ok := num(m[4])
		if !ok {
			return 0, 0, false
		}
		return -1, total, true
	}
	first, ok1 := num(m[1])
	last, ok2 := num(m[2])
	total = -1
	ok3 := true
	if m[3] != "*" {
		total, ok3 = num(m[3])
	}
	if !ok1 || !ok2 || !ok3 || first > last || total >= 0 && last >= total {
		return 0, 0, false
	}
	return first, total, true
}
