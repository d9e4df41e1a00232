package bankapi

import "testing"

func TestPrefersJose(t *testing.T) {
	for _, tc := range []struct {
		accept []string
		want   bool
	}{
		{nil, false},
		{[]string{""}, false},
		{[]string{"application/json"}, false},
		{[]string{"*/*"}, false},
		{[]string{"application/jose"}, true},
		{[]string{"APPLICATION/JOSE"}, true},
		{[]string{"application/jose;q=0"}, false},
		{[]string{"application/jose; q=0.0"}, false},
		{[]string{"application/jose, application/json"}, true},
		{[]string{"application/json, application/jose"}, true},
		{[]string{"application/json, application/jose;q=0.5"}, false},
		{[]string{"application/json;q=0.5, application/jose"}, true},
		{[]string{"application/jose;q=0.5, */*"}, false},
		{[]string{"application/jose, */*;q=0.1"}, true},
		{[]string{"application/jose;q=0.4, application/*;q=0.3, */*"}, true},
		{[]string{"application/json;q=0.2", "application/jose;q=0.3"}, true},
		{[]string{"application/jose+json"}, false},
		{[]string{"application/jose;q=junk"}, true},
	} {
		if got := mentionsJose(tc.accept) && prefersJose(tc.accept); got != tc.want {
			t.Errorf("Accept %q: jose %v, want %v", tc.accept, got, tc.want)
		}
	}
}
