package smarthome

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"strings"

	"partnerapi/internal/basicauth"
)

// OpaqueCredential is a credential string an agent sends whole after
// "Basic ", not Base64 of login:password: the provider's curl sample shows
// `Authorization: Basic qwerty-1234-...` (reference §2). It stands for the
// agent Login, and only its SHA-256 is kept, so that neither the
// configuration nor the process holds it in clear.
type OpaqueCredential struct {
	Login string
	hash  [sha256.Size]byte
}

// ParseOpaqueCredentials reads a comma-separated list of
// LOGIN=sha256:HEX, HEX being the SHA-256 of the credential string in
// lower- or upper-case hex (`printf %s "$CRED" | sha256sum`). A login may
// have several (a new one and the one it replaces); one hash under two
// logins is refused, since the credential would not say which agent sent
// it. The errors name the entry by its position and login, never by what
// follows the equals sign, in case a credential was pasted there in clear.
func ParseOpaqueCredentials(spec string) ([]OpaqueCredential, error) {
	var out []OpaqueCredential
	seen := map[[sha256.Size]byte]string{}
	for i, entry := range strings.Split(spec, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		login, value, ok := strings.Cut(entry, "=")
		if !ok {
			return nil, fmt.Errorf("entry %d: want LOGIN=sha256:HEX", i+1)
		}
		if !ValidLogin(login) {
			return nil, fmt.Errorf("entry %d: the login must be 1-128 of A-Z a-z 0-9 . _ @ -", i+1)
		}
		hexSum, ok := strings.CutPrefix(value, "sha256:")
		if !ok {
			return nil, fmt.Errorf("entry %d (%s): want sha256: and the credential's SHA-256, not the credential", i+1, login)
		}
		b, err := hex.DecodeString(hexSum)
		if err != nil || len(b) != sha256.Size {
			return nil, fmt.Errorf("entry %d (%s): want sha256: and 64 hex digits", i+1, login)
		}
		c := OpaqueCredential{Login: login}
		copy(c.hash[:], b)
		if other, dup := seen[c.hash]; dup {
			return nil, fmt.Errorf("entry %d (%s): the same credential is given twice (also for %s)", i+1, login, other)
		}
		seen[c.hash] = login
		out = append(out, c)
	}
	return out, nil
}

// SetOpaqueCredentials makes the Service accept cs from agents besides
// their logins and passwords. Call it before the Service is first used.
func (s *Service) SetOpaqueCredentials(cs []OpaqueCredential) { s.opaque = cs }

// authenticateOpaque reports whether authorization is Basic and one of
// the opaque credentials, case-insensitive in the scheme as Basic is and
// after any number of spaces (basicauth.Credentials). Its
// SHA-256 is compared with every configured one in constant time, so how
// long the check takes does not tell how close a guess came or which entry
// it matched. The credential stands for its agent while the agent has a
// credential in the store (AgentRegistered): deleting the agent ends it as
// it ends the agent's password, and the MQTT gate serves the same login.
func (s *Service) authenticateOpaque(ctx context.Context, authorization string) (bool, error) {
	if len(s.opaque) == 0 {
		return false, nil
	}
	cred, ok := basicauth.Credentials(authorization)
	if !ok || cred == "" {
		return false, nil
	}
	sum := sha256.Sum256([]byte(cred))
	login := ""
	for i := range s.opaque {
		if subtle.ConstantTimeCompare(sum[:], s.opaque[i].hash[:]) == 1 {
			login = s.opaque[i].Login
		}
	}
	if login == "" {
		return false, nil
	}
	return s.AgentRegistered(ctx, login)
}
