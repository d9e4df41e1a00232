package banking

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// checkPurposeCharset checks the characters of a payment's purpose (field
// 24) against the payment-order rules' set (reference §5.6): digits, Latin
// and Russian letters (Ёё included), spaces, punctuation and the ASCII
// symbols, and №. The SDKs' pattern ^.{1,210}$ takes any character but a
// line break, so a character outside the set (an emoji, a tab, another
// script) is a failed check, CHECKERROR by default (§15 #8), naming the
// first such character.
func checkPurposeCharset(f *Findings, purpose string) {
	for _, r := range purpose {
		if !purposeRune(r) {
			f.checks.add("purpose", "назначение платежа: недопустимый символ "+quoteRune(r))
			return
		}
	}
}

func purposeRune(r rune) bool {
	switch {
	case r < utf8.RuneSelf:
		// Printable ASCII: digits, Latin letters, space, punctuation and
		// symbols; control characters (a tab) are not.
		return r >= ' ' && r != 0x7f
	case r == 'Ё' || r == 'ё' || r == '№':
		return true
	case 'А' <= r && r <= 'я':
		return true
	}
	// Typographic punctuation (« », dashes, an ellipsis, curly quotes) and
	// spaces that word processors put into pasted text.
	return unicode.IsPunct(r) || unicode.Is(unicode.Zs, r)
}

// quoteRune names r in a bankComment: the character itself where it is
// printable, else its code point (U+0009), so a comment never carries a
// control character.
func quoteRune(r rune) string {
	if unicode.IsPrint(r) {
		return "«" + string(r) + "»"
	}
	return fmt.Sprintf("U+%04X", r)
}
