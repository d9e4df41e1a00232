package gost

import (
	"regexp"
	"strings"
	"testing"
)

// canonicalUUID is RFC 9562 §4's string form as a regular expression, the
// grammar IsCanonicalUUID is written out by hand to save.
var canonicalUUID = regexp.MustCompile(`\A[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\z`)

// FuzzIsCanonicalUUID holds IsCanonicalUUID to the RFC 9562 grammar: the
// same verdict as the regular expression on any text, unchanged by the
// letter case of its hex digits.
func FuzzIsCanonicalUUID(f *testing.F) {
	for _, s := range []string{"3fa85f64-5717-4562-b3fc-2c963f66afa6", "3FA85F64-5717-4562-B3FC-2C963F66AFA6",
		"{3fa85f64-5717-4562-b3fc-2c963f66afa6}", "urn:uuid:3fa85f64-5717-4562-b3fc-2c963f66afa6",
		"3fa85f6457174562b3fc2c963f66afa6", "3fa85f64-5717-4562-b3fc-2c963f66afa", "3fa85f64-5717-4562-b3fc-2c963f66afa6\n",
		"3fa85f64-5717-4562-b3fc-2c963f66afaG", "3fa85f64_5717-4562-b3fc-2c963f66afa6", "3fa85f64-5717-4562-b3fc-2c963f66afа"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := IsCanonicalUUID(s)
		if want := canonicalUUID.MatchString(s); got != want {
			t.Fatalf("IsCanonicalUUID(%q) = %v, the grammar says %v", s, got, want)
		}
		if IsCanonicalUUID(strings.ToUpper(s)) != got && strings.ToUpper(s) != s && len(strings.ToUpper(s)) == len(s) {
			t.Fatalf("IsCanonicalUUID(%q) = %v, of its upper case %v", s, got, !got)
		}
	})
}
