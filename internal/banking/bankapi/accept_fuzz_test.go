package bankapi

import (
	"strings"
	"testing"
)

// asciiLower lowers ASCII letters only: media types compare
// case-insensitively in ASCII (RFC 9110 §8.3.1), and no other letter
// stands for one of theirs.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// namesType reports whether some media range of accept is, ASCII case and
// optional white space (spaces and tabs) aside, one of types.
func namesType(accept []string, types ...string) bool {
	for _, h := range accept {
		for _, item := range strings.Split(h, ",") {
			mt, _, _ := strings.Cut(item, ";")
			for _, t := range types {
				if asciiLower(strings.Trim(mt, " \t")) == t {
					return true
				}
			}
		}
	}
	return false
}

// FuzzAcceptWeights holds the Accept readers of the JWS answer and of
// user-info to RFC 9110 §12.5.1 on any header lines: a weight is at most
// 1, so a client that adds application/jose (application/jwt), weight 1,
// always gets the JWS (the JWT), equal weights going to it; JWS is chosen
// only for a range that is application/jose in ASCII letters, and the
// bare claims only when application/json or a wildcard over it is named;
// the cheap pre-check never turns away an Accept that prefers JWS.
func FuzzAcceptWeights(f *testing.F) {
	for _, s := range []string{"application/json", "application/jose", "application/json, application/jose;q=0.5",
		"application/jose;q=0.4, application/*;q=0.3, */*", "application/json, text/plain, */*", "application/jose;q=junk",
		"application/json;q=0.2", "APPLICATION/JOSE; Q=1.0", "application/jwt;q=0, application/json"} {
		f.Add(s, "")
	}
	f.Add("application/json;q=0.9", "application/jose;q=0.3")
	f.Fuzz(func(t *testing.T, a, b string) {
		accept := []string{a}
		if b != "" {
			accept = append(accept, b)
		}
		jose := prefersJose(accept)
		if jose && !mentionsJose(accept) {
			t.Fatalf("Accept %q prefers JWS but the pre-check says it never mentions it", accept)
		}
		if jose && !namesType(accept, joseContentType) {
			t.Fatalf("Accept %q prefers JWS without naming application/jose", accept)
		}
		if prefersJSONClaims(accept) && !namesType(accept, "application/json", "application/*", "*/*") {
			t.Fatalf("Accept %q prefers JSON claims without naming JSON", accept)
		}
		if with := append(accept[:len(accept):len(accept)], "application/jose"); !prefersJose(with) {
			t.Fatalf("Accept %q does not prefer JWS named at weight 1", with)
		}
		if with := append(accept[:len(accept):len(accept)], "application/jwt"); prefersJSONClaims(with) {
			t.Fatalf("Accept %q prefers JSON over a JWT named at weight 1", with)
		}
	})
}

// TestAcceptWeightsStrict: a q that ParseFloat reads as NaN is unreadable,
// weight 1, rather than a weight that loses every comparison; and only
// ASCII letters fold, so "applİcation/jose" (İ lowers to i in Go) and
// "application/joſe" (ſ folds to s) name no type (found while writing
// FuzzAcceptWeights, whose properties catch both).
func TestAcceptWeightsStrict(t *testing.T) {
	for _, tc := range []struct {
		accept      string
		jose, jwt   bool // prefersJose, !prefersJSONClaims
		description string
	}{
		{"application/jose, application/json;q=NaN", true, false, "NaN is weight 1, equal weights go to JWS"},
		{"application/json;q=nan", false, false, "JSON named at weight 1 and no JWT: the bare claims"},
		{"application/json;q=nan, application/jwt;q=0.5", false, false, "JSON at weight 1 over the JWT"},
		{"applİcation/jose", false, true, "dotted capital I is no i"},
		{"application/joſe", false, true, "long s is no s"},
		{"application/jose\u00a0", false, true, "a no-break space is no white space of HTTP"},
		{"\tAPPLICATION/JOSE ;q=1", true, true, "spaces, tabs and ASCII case are"},
	} {
		accept := []string{tc.accept}
		if got := prefersJose(accept); got != tc.jose {
			t.Errorf("Accept %q: prefersJose %v, want %v (%s)", tc.accept, got, tc.jose, tc.description)
		}
		if got := !prefersJSONClaims(accept); got != tc.jwt {
			t.Errorf("Accept %q: JWT answer %v, want %v (%s)", tc.accept, got, tc.jwt, tc.description)
		}
	}
}
