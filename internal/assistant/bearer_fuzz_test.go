package assistant

import (
	"strings"
	"testing"
)

// FuzzBearerToken holds the Authorization reader of /api/v1 to RFC 6750
// §2.1 with the scheme in any letter case (RFC 7235): "Bearer", spaces,
// then the token, which comes back as sent; the token it answers is part
// of the header, without white space around it; and a header that does
// not open with the scheme and a space has no token.
func FuzzBearerToken(f *testing.F) {
	f.Add("eyJhbGciOi.J9", uint8(0), uint8(1))
	f.Add("a", uint8(0b101010), uint8(2))
	f.Add(" x ", uint8(0), uint8(1))
	f.Fuzz(func(t *testing.T, tok string, caseBits, spaces uint8) {
		if got := BearerToken(tok); got != "" && (!strings.Contains(tok, got) || strings.TrimSpace(got) != got) {
			t.Fatalf("BearerToken(%q) = %q", tok, got)
		} else if got != "" && !strings.EqualFold(strings.TrimSpace(tok)[:7], "bearer ") {
			t.Fatalf("BearerToken(%q) = %q without the scheme", tok, got)
		}
		tok = strings.TrimSpace(tok)
		if tok == "" {
			return
		}
		scheme := []byte("Bearer")
		for i := range scheme {
			if caseBits&(1<<i) != 0 {
				scheme[i] ^= 0x20
			}
		}
		h := string(scheme) + strings.Repeat(" ", int(spaces%4)+1) + tok
		if got := BearerToken(h); got != tok {
			t.Fatalf("BearerToken(%q) = %q, want %q", h, got, tok)
		}
	})
}
