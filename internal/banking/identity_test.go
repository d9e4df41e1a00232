package banking

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestHashPassword(t *testing.T) {
	h, err := HashPassword("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	h2, _ := HashPassword("correct horse")
	if h == h2 {
		t.Fatal("password hashes are not salted")
	}
	for _, c := range []struct {
		hash, pw string
		ok       bool
	}{
		{h, "correct horse", true},
		{h, "correct horse ", false},
		{h, "", false},
		{"", "", false},
		{"pbkdf2-sha256$0$00$00", "", false},
		{strings.Replace(h, "pbkdf2-sha256", "md5", 1), "correct horse", false},
	} {
		if got := CheckPassword(c.hash, c.pw); got != c.ok {
			t.Errorf("CheckPassword(%q, %q) = %v", c.hash, c.pw, got)
		}
	}
}

func TestTokenAndSecretForms(t *testing.T) {
	tok := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}-1$`)
	if s := newOpaqueToken(); !tok.MatchString(s) {
		t.Fatalf("token %q", s)
	}
	sec := regexp.MustCompile(`^[A-Za-z0-9_-]{40}$`)
	if s := NewClientSecret(); !sec.MatchString(s) || s == NewClientSecret() {
		t.Fatalf("secret %q", s)
	}
}

func TestPKCE(t *testing.T) {
	// RFC 7636 appendix B.
	const verifier, challenge = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
	if !PKCEMatches(challenge, verifier) || PKCEMatches(challenge, verifier[:42]+"x") || PKCEMatches(challenge, "short") {
		t.Fatal("PKCE S256 check")
	}
}

func TestParseScopes(t *testing.T) {
	if got := ParseScopes("  openid PAY_DOC_RU\topenid "); !slices.Equal(got, []string{"openid", "PAY_DOC_RU"}) {
		t.Fatalf("%v", got)
	}
}

func FuzzCheckPassword(f *testing.F) {
	f.Add("pbkdf2-sha256$1$00$00", "x")
	f.Add("pbkdf2-sha256$-1$zz$", "")
	f.Fuzz(func(t *testing.T, hash, pw string) {
		// Must not panic; a tiny iteration count keeps the fuzzer fast.
		if parts := strings.Split(hash, "$"); len(parts) > 1 && len(parts[1]) > 3 {
			return
		}
		_ = CheckPassword(hash, pw)
	})
}

func FuzzParseScopes(f *testing.F) {
	f.Add("openid PAY_DOC_RU openid")
	f.Fuzz(func(t *testing.T, s string) {
		got := ParseScopes(s)
		for i, sc := range got {
			if sc == "" || strings.ContainsAny(sc, " \t\n") || slices.Contains(got[i+1:], sc) {
				t.Fatalf("scope %q in %v", sc, got)
			}
		}
	})
}

func FuzzPKCEMatches(f *testing.F) {
	f.Add("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
	f.Fuzz(func(t *testing.T, c, v string) { _ = PKCEMatches(c, v) })
}

// The provider's OAuth lifetimes (reference §3): the code 2 minutes, the
// access token 60 minutes, the refresh token 180 days and a used refresh
// token's reserve 2 hours. Tests elsewhere move clocks by these constants,
// so only this one fails if a constant drifts from the provider's value.
func TestOAuthLifetimes(t *testing.T) {
	for _, tc := range []struct {
		name      string
		got, want time.Duration
	}{
		{"code", AuthCodeTTL, 2 * time.Minute},
		{"access token", AccessTokenTTL, time.Hour},
		{"refresh token", RefreshTokenTTL, 180 * 24 * time.Hour},
		{"refresh reserve", RefreshReserve, 2 * time.Hour},
	} {
		if tc.got != tc.want {
			t.Errorf("%s lives %v, the provider's %v", tc.name, tc.got, tc.want)
		}
	}
}

// The sandbox's magic values are the provider's literals (reference §7):
// partners hard-code them, so a constant that drifts breaks them while
// tests that use the constants still pass.
func TestSandboxMagicValues(t *testing.T) {
	for _, tc := range []struct{ name, got, want string }{
		{"sole authority certificate", SandboxCertSole, "bb014b5d-8159-40be-97c1-eafeed4a8c3d"},
		{"first signature certificate", SandboxCertFirst, "d5d4f811-f4d4-4205-a70f-58f772eeab72"},
		{"second signature certificate", SandboxCertSecond, "4f29c8ef-b55d-43c7-a321-f2b1303a29cd"},
		{"qualified (UKEP_UL) certificate", SandboxCertQualified, "f47ac10b-58cc-4372-a567-0e02b2c3d479"},
		{"QR confirmation that succeeds", QRSandboxOK, "739b63f1-a5b2-4150-a152-e22eb39a3386"},
		{"QR confirmation of a user without OneTimePassword", QRSandboxNotOTP, "175529cd-26bc-4988-b14b-4aa1b7d81b92"},
		{"QR confirmation of a document in the wrong status (prefix)", QRSandboxWrongPrefix, "998be1fd-4e89-4a3"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %s, the reference's %s", tc.name, tc.got, tc.want)
		}
	}
	if SandboxCertTypes[SandboxCertQualified] != "UKEP_UL" {
		t.Errorf("the qualified certificate's type is %q, want UKEP_UL", SandboxCertTypes[SandboxCertQualified])
	}
}
