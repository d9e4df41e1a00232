package banking

import (
	"encoding/base64"
	"strings"
	"testing"
)

// FuzzValidBase64 holds validBase64, the hand-written check of a
// signature's Base64, to the decoder it stands for (decodesToBytes) on any
// text, where TestValidBase64 walks a small alphabet.
func FuzzValidBase64(f *testing.F) {
	sig := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("подпись", 20)))
	for _, s := range []string{"", "MIIB", "MI==", "MI=\n=", "MI==\r\n", "MIIB=", "MIIB\x00", sig,
		sig[:64] + "\r\n" + sig[64:], sig + "\n", sig[:len(sig)-1]} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := validBase64(s), decodesToBytes(s); got != want {
			t.Fatalf("validBase64(%q) = %v, the decoder says %v", s, got, want)
		}
	})
}
