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
