package banking

import (
	"math/rand/v2"
	"regexp"
	"testing"

	"partnerapi/internal/gost"
)

// TestIsUUIDMatchesRegexp checks gost.IsCanonicalUUID against reUUID, the pattern it
// replaces on the create path, on chosen edge cases and random mutations of
// a valid UUID.
func TestIsUUIDMatchesRegexp(t *testing.T) {
	valid := "0a1B2c3D-4e5F-4000-8000-abcdefABCDEF"
	cases := []string{"", valid, valid + "0", valid[:35], "0a1b2c3d14e5f-4000-8000-abcdefabcdef",
		"0a1b2c3d-4e5f-4000-8000-abcdefabcdeg", "0a1b2c3d-4e5f-4000-8000-abcdefabcde\n", "ё" + valid[2:],
		"00000000-0000-0000-0000-000000000000", "--------------------------------0000"}
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := "0123456789abcdefABCDEFgG-\n \x00é"
	for range 5000 {
		b := []byte(valid)
		for range 1 + r.IntN(3) {
			b[r.IntN(len(b))] = alphabet[r.IntN(len(alphabet))]
		}
		cases = append(cases, string(b))
	}
	for _, c := range cases {
		if got, want := gost.IsCanonicalUUID(c), reUUID.MatchString(c); got != want {
			t.Fatalf("gost.IsCanonicalUUID(%q) = %v, regexp says %v", c, got, want)
		}
	}
}

// reUUID is the pattern gost.IsCanonicalUUID replaced on the create path.
var reUUID = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
