package banking

import (
	"encoding/json"
	"regexp"
	"testing"
	"time"
)

// TestParseDateAsTimeParse checks the hand-written ParseDate against
// time.Parse(time.DateOnly) on valid dates, month ends, leap days and
// malformed text.
func TestParseDateAsTimeParse(t *testing.T) {
	inputs := []string{
		"2024-02-29", "2023-02-29", "2100-02-29", "2000-02-29", "2026-01-31", "2026-04-31", "2026-12-31",
		"2026-13-01", "2026-00-10", "2026-01-00", "2026-01-32", "0000-01-01", "9999-12-31",
		"2026-1-01", "2026-01-1", "26-01-01", "2026/01/01", "2026-01-01 ", " 2026-01-01", "", "2026-0a-01",
		"２０２６-01-01", "2026-01-01T00:00:00Z", "+026-01-01", "-026-01-01",
	}
	for _, in := range inputs {
		want, err := time.Parse(time.DateOnly, in)
		got, ok := ParseDate(in)
		if ok != (err == nil) || !got.Equal(want) {
			t.Errorf("ParseDate(%q) = %v, %v; time.Parse: %v, %v", in, got, ok, want, err)
		}
	}
}

// TestHandChecksAsRegexps checks the regexp-free field checks against the
// regexps they replace.
func TestHandChecksAsRegexps(t *testing.T) {
	inputs := []string{"", "1", "5", "6", "0", "12", "123", "12345", "123456", "1234567", "1a", " 1", "1\n", "٣",
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		"0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef",
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde"}
	checks := []struct {
		re   string
		hand func(string) bool
	}{
		{`^[0-9]{1,6}$`, func(s string) bool { return digitsBetween(s, 1, 6) }},
		{`^[0-9]{5}$`, func(s string) bool { return digitsBetween(s, 5, 5) }},
		{`^[0-9]{0,2}$`, func(s string) bool { return digitsBetween(s, 0, 2) }},
		{`^[0-9a-f]{64}$`, isLowerHex64},
	}
	for _, c := range checks {
		re := regexp.MustCompile(c.re)
		for _, in := range inputs {
			if got, want := c.hand(in), re.MatchString(in); got != want {
				t.Errorf("%s on %q: hand-written %v, regexp %v", c.re, in, got, want)
			}
		}
	}
}

// TestAppendJSONStringAsMarshal checks the copying fast path of the
// answer's bank fields against encoding/json.
func TestAppendJSONStringAsMarshal(t *testing.T) {
	for _, in := range []string{"", "IMPLEMENTED", "ab12ef", "a\"b", `a\b`, "<x>", "a&b", "tab\there", "\x7f",
		"Документ исполнен", "line\u2028sep", "bad\xffutf8", "~ ok {}[]"} {
		want, _ := json.Marshal(in)
		if got := appendJSONString([]byte("x"), in); string(got) != "x"+string(want) {
			t.Errorf("appendJSONString(%q) = %s, json.Marshal %s", in, got[1:], want)
		}
	}
}
