package banking

import (
	"context"
	"crypto/rand"
	"strings"
	"testing"

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
	certs := certMap{}
	for uuid, role := range SandboxCertRoles {
		// Under both cases, as the stores find them.
		c := Certificate{UUID: uuid, UserID: SandboxUserID, OrgID: SandboxOrgID, Role: role, Active: uuid != SandboxCertSole}
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
