package bankapi

import (
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// b64token is RFC 6750 §2.1's token grammar as a regular expression,
// written apart from bearer.IsB64Token's loop so that the fuzz target
// has an independent reference model.
var b64tokenPattern = regexp.MustCompile(`^[A-Za-z0-9._~+/-]+=*$`)

func b64token(s string) bool { return b64tokenPattern.MatchString(s) }

// FuzzBearer holds the /fintech/api Authorization reader to RFC 6750
// §2.1 and to the README's bare token: any b64token comes back as sent
// after "Bearer" in any letter case and one or more spaces, and sent
// alone, except the scheme's name itself, which alone is the scheme
// without its token; with any white space but SP and HTAB (RFC 9110 §5.6.3's OWS)
// before or after it nothing comes back; on any header the token read is
// empty or a b64token that the header is, or that follows its scheme, with
// only SP and HTAB around it.
func FuzzBearer(f *testing.F) {
	f.Add("eyJhbGciOi.J9", uint8(0), uint8(1), "Bearer x")
	f.Add("00000000-0000-4000-8000-000000000000-1", uint8(0b101010), uint8(2), "bearer")
	f.Add("abc==", uint8(0xff), uint8(0), "Bearer  ")
	f.Add("Bearer", uint8(0), uint8(0), "\tBearer\ttok ")
	f.Add("tok", uint8(0), uint8(0), "Bearer tok\u00a0")
	f.Fuzz(func(t *testing.T, tok string, caseBits, spaces uint8, raw string) {
		read := func(h string) string {
			r := httptest.NewRequest("GET", "/fintech/api/v1/client-info", nil)
			r.Header["Authorization"] = []string{h}
			return bearerToken(r)
		}
		if got := read(raw); got != "" {
			before, ok := strings.CutSuffix(strings.Trim(raw, " \t"), got)
			scheme := len(before) > 6 && strings.EqualFold(before[:6], "bearer") && before[6] == ' ' && strings.Trim(before[6:], " \t") == ""
			if !b64token(got) || !ok || before != "" && !scheme {
				t.Fatalf("bearerToken(%q) = %q", raw, got)
			}
		}
		if !b64token(tok) {
			return
		}
		scheme := []byte("Bearer")
		for i := range scheme {
			if caseBits&(1<<i) != 0 {
				scheme[i] ^= 0x20
			}
		}
		h := string(scheme) + strings.Repeat(" ", int(spaces%4)+1) + tok
		if got := read(h); got != tok {
			t.Fatalf("bearerToken(%q) = %q, want %q", h, got, tok)
		}
		if bare := read(tok); strings.EqualFold(tok, "bearer") && bare != "" || !strings.EqualFold(tok, "bearer") && bare != tok {
			t.Fatalf("bearerToken(%q), a bare token, = %q", tok, bare)
		}
		for _, sp := range []string{"\u00a0", "\u0085", "\u2003", "\u3000", "\v", "\f", "\r"} {
			for _, bad := range []string{h + sp, sp + h, tok + sp, sp + tok} {
				if got := read(bad); got != "" {
					t.Fatalf("bearerToken(%q) = %q, want no token", bad, got)
				}
			}
		}
	})
}
