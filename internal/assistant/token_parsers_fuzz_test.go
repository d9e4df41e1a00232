package assistant

import (
	"strings"
	"testing"

	"partnerapi/internal/gost"
)

// FuzzRqUID holds the token endpoint's RqUID check (IsUUID, a regular
// expression) to the banking API's hand-written check of the same form
// (gost.IsCanonicalUUID): the two readings of RFC 9562's string form give
// the same verdict on any text, so a header with a trailing newline or a
// braced or urn: form is refused by both.
func FuzzRqUID(f *testing.F) {
	for _, s := range []string{"6f0b1291-c7f3-43c6-bb2e-9f3efb2dc98e", "6F0B1291-C7F3-43C6-BB2E-9F3EFB2DC98E",
		"6f0b1291-c7f3-43c6-bb2e-9f3efb2dc98e\n", "{6f0b1291-c7f3-43c6-bb2e-9f3efb2dc98e}", "6f0b1291c7f343c6bb2e9f3efb2dc98e", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := IsUUID(s), gost.IsCanonicalUUID(s); got != want {
			t.Fatalf("IsUUID(%q) = %v, gost.IsCanonicalUUID says %v", s, got, want)
		}
	})
}

// FuzzParseScope holds the token endpoint's scope reader to the reference
// (§1): one of ASSISTANT_API_PERS, _B2B or _CORP, or its GIGACHAT_API_
// alias, in exactly that case, with white space around it ignored.
// Whatever it accepts reads back as itself, and the alias of a name
// accepted is accepted as the same scope.
func FuzzParseScope(f *testing.F) {
	for _, s := range []string{"GIGACHAT_API_PERS", "ASSISTANT_API_B2B", " GIGACHAT_API_CORP\t", "gigachat_api_pers",
		"GIGACHAT_API_", "ASSISTANT_API_PERS ASSISTANT_API_B2B", "GIGACHAT_API_GIGACHAT_API_PERS", "ASSISTANT_API_PERS\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sc, ok := ParseScope(s)
		name := strings.Trim(s, " \t\r\n\v\f")
		if rest, alias := strings.CutPrefix(name, "GIGACHAT_API_"); alias {
			name = "ASSISTANT_API_" + rest
		}
		want := name == "ASSISTANT_API_PERS" || name == "ASSISTANT_API_B2B" || name == "ASSISTANT_API_CORP"
		if ok != want || ok && string(sc) != name {
			t.Fatalf("ParseScope(%q) = %q, %v; want %q, %v", s, sc, ok, name, want)
		}
		if !ok {
			return
		}
		if again, ok := ParseScope(string(sc)); !ok || again != sc {
			t.Fatalf("ParseScope(%q) = %q, %v: not a fixed point", sc, again, ok)
		}
		alias := "GIGACHAT_API_" + strings.TrimPrefix(string(sc), "ASSISTANT_API_")
		if a, ok := ParseScope(alias); !ok || a != sc {
			t.Fatalf("ParseScope(%q) = %q, %v, want %q", alias, a, ok, sc)
		}
	})
}
