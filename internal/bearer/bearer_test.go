package bearer

import "testing"

func TestIsB64Token(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want bool
	}{
		{"a", true},
		{"eyJhbGciOi.J9-_~+/", true},
		{"abc==", true},
		{"00000000-0000-4000-8000-000000000000-1", true},
		{"", false},
		{"=", false},
		{"==", false},
		{"a=b", false},
		{"a b", false},
		{"a\t", false},
		{"a,b", false},
		{"a\"", false},
		{"токен", false},
		{"a\u00a0", false},
		{"a\x00", false},
	} {
		if got := IsB64Token(tc.s); got != tc.want {
			t.Errorf("IsB64Token(%q) = %v, want %v", tc.s, got, tc.want)
		}
	}
}

// TestParse: the token of an Authorization value and whether the value
// was a malformed bearer credential (RFC 6750 §3.1's invalid_request) as
// opposed to none at all, or another scheme's, which carry no error code.
func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, h   string
		bare      bool
		token     string
		malformed bool
	}{
		{"empty", "", false, "", false},
		{"white space only", " \t ", true, "", false},
		{"Bearer token", "Bearer abc", false, "abc", false},
		{"scheme in any case, OWS around", " \tbEaReR  abc= \t", false, "abc=", false},
		{"bare token, allowed", "abc", true, "abc", false},
		{"bare token, not allowed", "abc", false, "", false},
		{"another scheme", "Basic dXNlcjpwYXNz", false, "", false},
		{"another scheme, bare allowed", "Basic dXNlcjpwYXNz", true, "", false},
		{"token with a space", "Bearer a b", false, "", true},
		{"token with a space, bare allowed", "Bearer a b", true, "", true},
		{"token with a Unicode space", "Bearer abc\u00a0", false, "", true},
		{"token with a comma", "Bearer a,b", true, "", true},
		{"non-ASCII token", "Bearer токен", false, "", true},
		{"scheme alone", "Bearer", false, "", true},
		{"scheme alone, bare allowed", "Bearer", true, "", true},
		{"scheme and spaces, bare allowed", "Bearer   ", true, "", true},
		{"scheme alone in another case, bare allowed", "bEARER", true, "", true},
		{"a bare token starting with the scheme's name", "Bearerabc", true, "Bearerabc", false},
		{"scheme and spaces", "Bearer   ", false, "", true},
		{"scheme then HTAB", "Bearer\tabc", false, "", true},
		{"scheme then HTAB, bare allowed", "Bearer\tabc", true, "", true},
		{"bare value not a token", "a,b", true, "", true},
		{"bare value not a token, not allowed", "a,b", false, "", false},
	} {
		token, malformed := Parse(tc.h, tc.bare)
		if token != tc.token || malformed != tc.malformed {
			t.Errorf("%s: Parse(%q, %v) = %q, %v; want %q, %v", tc.name, tc.h, tc.bare, token, malformed, tc.token, tc.malformed)
		}
	}
}
