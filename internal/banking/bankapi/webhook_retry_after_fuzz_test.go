package bankapi

import (
	"net/http"
	"strconv"
	"testing"
	"time"
)

// FuzzParseRetryAfter holds the reading of a receiver's Retry-After to
// RFC 9110 §10.2.3: a delay of whole seconds is that many seconds, within
// maxRetryAfter however long its digits run; an HTTP date is that instant;
// anything else asks for nothing; and never both a delay and a date.
func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"", "0", "120", "007", "99999999999999999999999", "-1", "+5", "1.5", " 5", "soon",
		"Sun, 22 Nov 2026 12:01:30 GMT", "Sunday, 22-Nov-26 12:01:30 GMT", "Sun Nov 22 12:01:30 2026", "Sun, 31 Feb 2026 12:00:00 GMT",
		"Mon, 01 Jan 0001 00:00:00 GMT"} {
		f.Add(s, int64(0))
	}
	f.Fuzz(func(t *testing.T, v string, unix int64) {
		after, at := parseRetryAfter(v)
		if after < 0 || after > maxRetryAfter || after > 0 && !at.IsZero() {
			t.Fatalf("%q: after %v at %v", v, after, at)
		}
		if digitsOnly(v) {
			n, err := strconv.ParseInt(v, 10, 64)
			want := maxRetryAfter
			if err == nil && n <= int64(maxRetryAfter/time.Second) {
				want = time.Duration(n) * time.Second
			}
			if after != want || !at.IsZero() {
				t.Fatalf("%q: after %v at %v, want %v", v, after, at, want)
			}
		} else if after != 0 {
			t.Fatalf("%q is no delay, read as %v", v, after)
		}
		if pt, err := http.ParseTime(v); !digitsOnly(v) && !at.Equal(pt) {
			t.Fatalf("%q: date %v, http.ParseTime %v %v", v, at, pt, err)
		}
		// A date the way net/http writes one reads back to the second.
		when := time.Unix(unix%(1<<35), 0).UTC()
		if when.Year() < 1 || when.Year() > 9999 {
			return
		}
		if _, got := parseRetryAfter(when.Format(http.TimeFormat)); !got.Equal(when) {
			t.Fatalf("%s read as %v", when.Format(http.TimeFormat), got)
		}
	})
}
