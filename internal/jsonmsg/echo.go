package jsonmsg

import (
	"strings"
	"unicode/utf8"
)

// EchoRunes is how many characters of a client's value an answer or a log
// line quotes back. A value names what was wrong (a category, a model id, a
// field, a path) and its first 128 characters identify it; quoting the whole
// of it let one request make the server write megabytes of its own input
// back, and into the logs of every proxy on the way.
const EchoRunes = 128

// EchoMarker ends a value Echo cut short, so a reader knows the quote is
// not the whole value.
const EchoMarker = "…"

// Echo is s as an answer or a log line may quote it: its first EchoRunes
// characters, then EchoMarker if any were left out, with each byte that is
// not part of valid UTF-8 written as U+FFFD, so that the quote is always
// valid UTF-8 (encoding/json would replace them as well, but a hand-built
// line would not). It reads at most EchoRunes characters of s whatever its
// length, and returns s itself when s is short and valid.
func Echo(s string) string { return EchoAtMost(s, EchoRunes) }

// EchoAtMost is Echo with a bound of max characters, for a quote whose
// whole matters more than a message's (a request's path on its access log
// line, which is long only when a client makes it so).
func EchoAtMost(s string, max int) string {
	n, i := 0, 0
	valid := true
	for i < len(s) && n < max {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			valid = false
		}
		i += size
		n++
	}
	if i == len(s) && valid {
		return s
	}
	var b strings.Builder
	b.Grow(i + len(EchoMarker))
	for j := 0; j < i; {
		r, size := utf8.DecodeRuneInString(s[j:])
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[j : j+size])
		}
		j += size
	}
	if i < len(s) {
		b.WriteString(EchoMarker)
	}
	return b.String()
}
