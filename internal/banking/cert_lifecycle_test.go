package banking

import (
	"context"
	"crypto/rand"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/gost"
)

// In the sandbox the fixed uuids decide the outcome (§7) until the
// operator deactivates one: then a digest signature with it is the
// sandbox's "check the certificate" WORKFLOW_FAULT, and a JWS with it as
// kid is SIGN_CHECK_EXCEPTION (§9.6), whatever the uuid's case; the other
// fixed certificates are not affected.
func TestSandboxDeactivatedCertificate(t *testing.T) {
	ctx := context.Background()
	key, err := gost.GenerateKey(gost.TC26256A, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := gost.SelfSignedCertificate(key, "sandbox", time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	certs := certMap{}
	for uuid, role := range SandboxCertRoles {
		// Under both cases, as the stores find them.
		c := Certificate{UUID: uuid, UserID: SandboxUserID, OrgID: SandboxOrgID, DER: cert.Raw, Role: role, Active: uuid != SandboxCertSole}
		certs[uuid], certs[strings.ToUpper(uuid)] = c, c
	}
	p := Principal{OrgID: SandboxOrgID, UserID: SandboxUserID}
	v := NewSignatureVerifier(ContourSandbox, certs)
	cards := jwsCards(t, ContourSandbox, IdentityJWSCertificates{Store: certs})
	for _, tc := range []struct {
		uuid string
		kind Kind // 0: taken
	}{
		{SandboxCertSole, KindWorkflow},
		{strings.ToUpper(SandboxCertSole), KindWorkflow},
		{SandboxCertFirst, 0},
	} {
		_, err := v.Verify(ctx, p, "digest", []DigestSignature{sig(tc.uuid)})
		if KindOf(err) != tc.kind || (tc.kind == 0) != (err == nil) {
			t.Errorf("digest signature %s: %v, want kind %d", tc.uuid, err, tc.kind)
		}
		jws, err := gost.SignJWS([]byte(`{}`), tc.uuid, key)
		if err != nil {
			t.Fatal(err)
		}
		_, err = cards.OpenJWS(ctx, p, []byte(jws))
		if want := map[Kind]Kind{KindWorkflow: KindSignCheck}[tc.kind]; KindOf(err) != want || (want == 0) != (err == nil) {
			t.Errorf("JWS kid %s: %v, want kind %d", tc.uuid, err, want)
		}
	}
}

// certWithin is a registered certificate of user u1 in org, signing role
// sole, valid from notBefore to notAfter, and its key.
func certWithin(t *testing.T, uuid string, notBefore, notAfter time.Time) (Certificate, signer) {
	t.Helper()
	key, err := gost.GenerateKey(gost.TC26256A, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := gost.SelfSignedCertificate(key, uuid, notBefore, notAfter)
	if err != nil {
		t.Fatal(err)
	}
	return Certificate{UUID: uuid, UserID: "u1", OrgID: "org", DER: cert.Raw, Role: RoleSoleAuthority, Active: true}, signer{cert, key}
}

// A certificate outside its notBefore/notAfter at the time of verification
// is treated as inactive: a digest signature or a JWS made with it is
// SIGN_CHECK_EXCEPTION where signatures are verified (§13 "certificate not
// found or inactive", §9.6), and UsableAt — /v1/crypto's active — is
// false. The verifier and the JWS check read the clock they are given, so
// a certificate valid now is refused once that clock passes its notAfter.
func TestCertificateValidityPeriod(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	const digest = "amount=1.00"
	const (
		curID = "11111111-1111-4111-8111-111111111111"
		expID = "22222222-2222-4222-8222-222222222222"
		futID = "33333333-3333-4333-8333-333333333333"
		offID = "44444444-4444-4444-8444-444444444444"
	)
	p := Principal{OrgID: "org", UserID: "u1"}
	current, curKey := certWithin(t, curID, now.Add(-time.Hour), now.Add(time.Hour))
	expired, expKey := certWithin(t, expID, now.Add(-48*time.Hour), now.Add(-24*time.Hour))
	future, futKey := certWithin(t, futID, now.Add(24*time.Hour), now.Add(48*time.Hour))
	off, offKey := certWithin(t, offID, now.Add(-time.Hour), now.Add(time.Hour))
	off.Active = false
	certs := certMap{curID: current, expID: expired, futID: future, offID: off}
	at := func(d time.Duration) func() time.Time { return func() time.Time { return now.Add(d) } }
	for _, tc := range []struct {
		name   string
		c      Certificate
		key    signer
		clock  func() time.Time
		usable bool
	}{
		{"within its period", current, curKey, time.Now, true},
		{"expired", expired, expKey, time.Now, false},
		{"not yet valid", future, futKey, time.Now, false},
		{"deactivated", off, offKey, time.Now, false},
		{"valid now, verified after its notAfter", current, curKey, at(2 * time.Hour), false},
		{"valid now, verified before its notBefore", current, curKey, at(-2 * time.Hour), false},
		{"not yet valid now, verified within its period", future, futKey, at(36 * time.Hour), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.c.UsableAt(tc.clock()); got != tc.usable {
				t.Errorf("UsableAt = %v, want %v", got, tc.usable)
			}
			jws, err := gost.SignJWS([]byte(`{}`), tc.c.UUID, tc.key.key)
			if err != nil {
				t.Fatal(err)
			}
			for _, contour := range []string{ContourTest, ContourProduction} {
				v := NewSignatureVerifierAt(contour, certs, tc.clock)
				for _, verify := range []func(context.Context, Principal, string, []DigestSignature) (SignatureSet, error){v.Verify, v.VerifyDocument} {
					_, err := verify(ctx, p, digest, []DigestSignature{tc.key.sign(t, tc.c.UUID, digest)})
					if tc.usable != (err == nil) || (!tc.usable && KindOf(err) != KindSignCheck) {
						t.Errorf("%s digest signature: %v, want usable %v", contour, err, tc.usable)
					}
				}
				cards := jwsCards(t, contour, IdentityJWSCertificates{Store: certs, Now: tc.clock})
				_, err := cards.OpenJWS(ctx, p, []byte(jws))
				if tc.usable != (err == nil) || (!tc.usable && KindOf(err) != KindSignCheck) {
					t.Errorf("%s JWS: %v, want usable %v", contour, err, tc.usable)
				}
			}
		})
	}
}

// In the sandbox a fixed certificate outside its validity period is
// refused as a deactivated one is: WORKFLOW_FAULT for a digest signature,
// SIGN_CHECK_EXCEPTION for a JWS.
func TestSandboxExpiredCertificate(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	c, key := certWithin(t, SandboxCertSole, now.Add(-48*time.Hour), now.Add(-24*time.Hour))
	certs := certMap{SandboxCertSole: c}
	p := Principal{OrgID: SandboxOrgID, UserID: SandboxUserID}
	if _, err := NewSignatureVerifier(ContourSandbox, certs).Verify(ctx, p, "digest", []DigestSignature{sig(SandboxCertSole)}); KindOf(err) != KindWorkflow {
		t.Errorf("digest signature: %v, want WORKFLOW_FAULT", err)
	}
	jws, err := gost.SignJWS([]byte(`{}`), SandboxCertSole, key.key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := jwsCards(t, ContourSandbox, IdentityJWSCertificates{Store: certs}).OpenJWS(ctx, p, []byte(jws)); KindOf(err) != KindSignCheck {
		t.Errorf("JWS: %v, want SIGN_CHECK_EXCEPTION", err)
	}
}

// user-info's signing right (userSignatureType, isIdentified) counts only
// the certificates the bank takes signatures with now: a deactivated or
// expired sole-authority certificate gives no right to sign.
func TestSigningRightsCountUsableCertificates(t *testing.T) {
	now := time.Now()
	sole, _ := certWithin(t, "11111111-1111-4111-8111-111111111111", now.Add(-time.Hour), now.Add(time.Hour))
	expired, _ := certWithin(t, "22222222-2222-4222-8222-222222222222", now.Add(-48*time.Hour), now.Add(-24*time.Hour))
	off := sole
	off.Active = false
	first := sole
	first.Role = RoleFirst
	for _, tc := range []struct {
		name  string
		certs []Certificate
		want  string
	}{
		{"sole", []Certificate{sole}, "Единственная подпись"},
		{"deactivated sole", []Certificate{off}, "Без права подписи"},
		{"expired sole", []Certificate{expired}, "Без права подписи"},
		{"expired sole and a first", []Certificate{expired, first}, "Первая подпись"},
	} {
		if got := userSignatureType(signingRights(tc.certs, now)); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
