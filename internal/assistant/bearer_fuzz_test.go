package assistant

import (
	"regexp"
	"strings"
	"testing"
)

// b64token is RFC 6750 §2.1's token grammar as a regular expression,
// written apart from bearer.IsB64Token's loop so that the fuzz target
// has an independent reference model.
var b64tokenPattern = regexp.MustCompile(`^[A-Za-z0-9._~+/-]+=*$`)

func b64token(s string) bool { return b64tokenPattern.MatchString(s) }

// FuzzBearerToken holds the Authorization reader of /api/v1 to RFC 6750
// §2.1 with the scheme in any letter case (RFC 7235): "Bearer", spaces,
// then a b64token, which comes back as sent; the token it answers is a
// b64token that follows the scheme in the header with only SP and HTAB
// (RFC 9110 §5.6.3's OWS) around them; a header that does not open with
// the scheme and a space has no token, and neither has one with any other
// white space (Unicode's included) before or after the token.
func FuzzBearerToken(f *testing.F) {
	f.Add("eyJhbGciOi.J9", uint8(0), uint8(1))
	f.Add("a", uint8(0b101010), uint8(2))
	f.Add(" x ", uint8(0), uint8(1))
	f.Add("Bearer x\u00a0", uint8(0), uint8(1))
	f.Fuzz(func(t *testing.T, tok string, caseBits, spaces uint8) {
		if got := BearerToken(tok); got != "" {
			before, ok := strings.CutSuffix(strings.Trim(tok, " \t"), got)
			if !b64token(got) || !ok || len(before) < 7 || !strings.EqualFold(before[:7], "bearer ") || strings.Trim(before[6:], " \t") != "" {
				t.Fatalf("BearerToken(%q) = %q", tok, got)
			}
		}
		scheme := []byte("Bearer")
		for i := range scheme {
			if caseBits&(1<<i) != 0 {
				scheme[i] ^= 0x20
			}
		}
		h := string(scheme) + strings.Repeat(" ", int(spaces%4)+1) + tok
		want := strings.Trim(tok, " \t")
		if !b64token(want) {
			want = ""
		}
		if got := BearerToken(h); got != want {
			t.Fatalf("BearerToken(%q) = %q, want %q", h, got, want)
		}
		if want == "" {
			return
		}
		for _, sp := range []string{"\u00a0", "\u0085", "\u2003", "\u3000", "\v", "\f", "\r"} {
			for _, bad := range []string{h + sp, sp + h} {
				if got := BearerToken(bad); got != "" {
					t.Fatalf("BearerToken(%q) = %q, want no token", bad, got)
				}
			}
		}
	})
}
