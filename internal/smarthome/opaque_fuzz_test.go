package smarthome

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

// FuzzParseOpaqueCredentials holds the --smarthome-opaque-credentials
// reader to its grammar, a comma-separated list of LOGIN=sha256:HEX: two
// entries written from any two credentials, with the hex in either case
// and white space and empty entries around them, read back as those
// logins and exactly the credentials' SHA-256 sums, in order; the same
// credential under both is refused. On any text, what it accepts has
// valid logins, no sum twice and no more entries than the text has
// non-empty fields.
func FuzzParseOpaqueCredentials(f *testing.F) {
	f.Add("agent-1", "qwerty-1234", "agent.2@x", "asdf", uint8(0), "")
	f.Add("a", "same", "b", "same", uint8(3), "a=sha256:"+strings.Repeat("0", 64))
	f.Add("bad login", "x", "b", "y", uint8(1), "a=sha256:"+strings.Repeat("F", 63)+", ,b=sha256:"+strings.Repeat("f", 64))
	f.Fuzz(func(t *testing.T, login1, cred1, login2, cred2 string, style uint8, raw string) {
		if cs, err := ParseOpaqueCredentials(raw); err == nil {
			fields := 0
			for _, e := range strings.Split(raw, ",") {
				if strings.TrimSpace(e) != "" {
					fields++
				}
			}
			seen := map[[sha256.Size]byte]bool{}
			for _, c := range cs {
				if !ValidLogin(c.Login) || seen[c.hash] {
					t.Fatalf("%q: accepted %q twice or with a bad login", raw, c.Login)
				}
				seen[c.hash] = true
			}
			if len(cs) > fields {
				t.Fatalf("%q: %d entries from %d fields", raw, len(cs), fields)
			}
		}
		if !ValidLogin(login1) || !ValidLogin(login2) {
			return
		}
		s1, s2 := sha256.Sum256([]byte(cred1)), sha256.Sum256([]byte(cred2))
		h1, h2 := hex.EncodeToString(s1[:]), hex.EncodeToString(s2[:])
		if style&1 != 0 {
			h1 = strings.ToUpper(h1)
		}
		sep := ","
		if style&2 != 0 {
			sep = " ,\t, "
		}
		spec := login1 + "=sha256:" + h1 + sep + login2 + "=sha256:" + h2
		if style&4 != 0 {
			spec = " " + spec + ","
		}
		cs, err := ParseOpaqueCredentials(spec)
		if s1 == s2 {
			if err == nil {
				t.Fatalf("%q: one credential under two logins is accepted", spec)
			}
			return
		}
		if err != nil || len(cs) != 2 || cs[0].Login != login1 || cs[1].Login != login2 || cs[0].hash != s1 || cs[1].hash != s2 {
			t.Fatalf("%q: %+v, %v", spec, cs, err)
		}
		if strings.Contains(err2s(err), cred1) && cred1 != "" {
			t.Fatalf("%q: the error names the credential", spec)
		}
	})
}

func err2s(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
