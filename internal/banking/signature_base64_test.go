package banking

import (
	"encoding/base64"
	"math/rand/v2"
	"strings"
	"testing"
)

// decodesToBytes is what validBase64 stands for: the verifier's decoding
// of a signature outside the sandbox.
func decodesToBytes(s string) bool {
	b, err := base64.StdEncoding.DecodeString(s)
	return err == nil && len(b) > 0
}

// TestValidBase64 holds validBase64 to the decoder: on every string of up
// to seven characters over an alphabet of one letter, one digit, the two
// symbols, padding, both line breaks and two characters outside Base64,
// and on long random ones, including real-sized signatures.
func TestValidBase64(t *testing.T) {
	for _, c := range []struct {
		s    string
		want bool
	}{
		{"", false}, {"MIIB", true}, {"MII", false}, {"MI==", true}, {"MIA=", true}, {"M===", false},
		{"MI=\n=", true}, {"MI==\r\n", true}, {"MI==MIIB", false}, {"MIA==", false}, {"\n\n", false},
		{"MI IB", false}, {"MIIB=", false}, {"MIIB\x00", false},
	} {
		if got := validBase64(c.s); got != c.want || got != decodesToBytes(c.s) {
			t.Errorf("validBase64(%q) = %v, want %v (decoder: %v)", c.s, got, c.want, decodesToBytes(c.s))
		}
	}
	const alphabet = "A9+/=\n\r *"
	var buf [7]byte
	var walk func(n int)
	checked, valid := 0, 0
	walk = func(n int) {
		s := string(buf[:n])
		checked++
		if got, want := validBase64(s), decodesToBytes(s); got != want {
			t.Fatalf("validBase64(%q) = %v, the decoder says %v", s, got, want)
		} else if got {
			valid++
		}
		if n == len(buf) {
			return
		}
		for i := 0; i < len(alphabet); i++ {
			buf[n] = alphabet[i]
			walk(n + 1)
		}
	}
	walk(0)
	if valid == 0 || valid == checked {
		t.Fatalf("%d of %d strings valid: the walk did not cover both answers", valid, checked)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		raw := make([]byte, 1+rng.IntN(2048))
		for j := range raw {
			raw[j] = byte(rng.Uint32())
		}
		s := base64.StdEncoding.EncodeToString(raw)
		switch rng.IntN(4) {
		case 1: // wrapped as PEM-like text
			var b strings.Builder
			for len(s) > 64 {
				b.WriteString(s[:64] + "\r\n")
				s = s[64:]
			}
			s = b.String() + s
		case 2: // one character replaced by any byte
			k := rng.IntN(len(s))
			s = s[:k] + string(rune(rng.IntN(128))) + s[k+1:]
		case 3: // cut anywhere
			s = s[:rng.IntN(len(s)+1)]
		}
		if got, want := validBase64(s), decodesToBytes(s); got != want {
			t.Fatalf("validBase64 of a %d-character string = %v, the decoder says %v: %q", len(s), got, want, s)
		}
	}
}
