package banking

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// lenBetween and checkName skip counting runes when a value's length in
// bytes already settles its bounds; what they report must stay what a
// count of every value reports, for ASCII, Cyrillic, four-byte runes and
// invalid bytes (each counting as one rune) at and around the bounds.
func TestRuneBoundsSkipCounting(t *testing.T) {
	values := []string{"", "a", "я", "😀", "\xff", "\x80\x80\x80", "😀😀", "ab😀", "\xf0\x9f\x98"}
	for n := 150; n <= 330; n += 5 {
		values = append(values, strings.Repeat("a", n), strings.Repeat("я", n/2), strings.Repeat("😀", n/4),
			strings.Repeat("\xd0", n), strings.Repeat("я", n/4)+strings.Repeat("\x80", n/3))
	}
	bounds := [][2]int{{1, 210}, {1, 240}, {2, 3}, {3, 8}, {0, 0}, {160, 170}}
	for _, v := range values {
		n := utf8.RuneCountInString(v)
		for _, b := range bounds {
			var p problems
			lenBetween(&p, "f", v, b[0], b[1])
			if want := n < b[0] || n > b[1]; (len(p.fields) > 0) != want {
				t.Errorf("lenBetween(%q (%d runes), %d, %d) reported %v, want %v", v, n, b[0], b[1], p.checks, want)
			}
		}
		var f Findings
		checkName(&f, "payeeName", "наименование получателя", v)
		if got, want := len(f.format.fields)+len(f.checks.fields) > 0, n > NameMaxRunes; got != want {
			t.Errorf("checkName(%d bytes, %d runes) reported %v %v, want a finding: %v", len(v), n, f.format.checks, f.checks.checks, want)
		}
		if got, want := len(f.format.fields) > 0, n > 254; got != want {
			t.Errorf("checkName(%d bytes, %d runes): format finding %v, want %v", len(v), n, got, want)
		}
	}
}
