package bankapi

import (
	"net/http"
	"strconv"
	"time"
)

// maxRetryAfter bounds the delay-seconds a receiver's Retry-After may name:
// past it the value saturates, so a number of any length parses without
// overflowing a Duration. The dispatcher waits at most its MaxBackoff and
// PauseMax anyway.
const maxRetryAfter = 366 * 24 * time.Hour

// parseRetryAfter reads a Retry-After value (RFC 9110 §10.2.3): a delay in
// whole seconds, or an HTTP date (http.ParseTime's three forms). It returns
// the delay or the date, and neither (both zero) for an empty value or one
// of neither form, which then asks for nothing.
func parseRetryAfter(v string) (after time.Duration, at time.Time) {
	if v == "" {
		return 0, time.Time{}
	}
	if digitsOnly(v) {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n > int64(maxRetryAfter/time.Second) {
			return maxRetryAfter, time.Time{}
		}
		return time.Duration(n) * time.Second, time.Time{}
	}
	if t, err := http.ParseTime(v); err == nil {
		return 0, t
	}
	return 0, time.Time{}
}

// digitsOnly reports whether s is one or more ASCII digits.
func digitsOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
