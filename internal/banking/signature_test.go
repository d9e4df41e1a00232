package banking

import (
	"context"
	"crypto/rand"
	"encoding/asn1"
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/gost"
)

type certMap map[string]Certificate

// Certificate uuids of the tests with registered certificates, named for
// what each certificate is: a certificateUuid must be a UUID (§9.1).
const (
	uSole         = "0a000000-0000-4000-8000-000000000001"
	uFirst        = "0a000000-0000-4000-8000-000000000002"
	uSecond       = "0a000000-0000-4000-8000-000000000003"
	uInactive     = "0a000000-0000-4000-8000-000000000004"
	uForeign      = "0a000000-0000-4000-8000-000000000005"
	uOwn          = "0a000000-0000-4000-8000-000000000006"
	uColleague    = "0a000000-0000-4000-8000-000000000007"
	uOtherOrg     = "0a000000-0000-4000-8000-000000000008"
	uInactivePeer = "0a000000-0000-4000-8000-000000000009"
	uNobody       = "0a000000-0000-4000-8000-00000000000a"
)

func (m certMap) GetCertificate(_ context.Context, uuid string) (Certificate, error) {
	c, ok := m[uuid]
	if !ok {
		return Certificate{}, ErrNotFound
	}
	return c, nil
}

func sig(uuid string) DigestSignature {
	return DigestSignature{Base64Encoded: "AQID", CertificateUUID: uuid}
}

func TestSandboxSignatureRules(t *testing.T) {
	v := NewSignatureVerifier(ContourSandbox, certMap{})
	p := Principal{OrgID: SandboxOrgID, UserID: SandboxUserID}
	qual := DigestSignature{Base64Encoded: "AQID", CertificateUUID: SandboxCertQualified, SignType: SignTypeQualified}
	tests := []struct {
		name     string
		sigs     []DigestSignature
		kind     Kind // 0 with ok
		ok       bool
		complete bool
		partial  bool
	}{
		{"none is a draft", nil, 0, true, false, false},
		{"sole", []DigestSignature{sig(SandboxCertSole)}, 0, true, true, false},
		{"first only", []DigestSignature{sig(SandboxCertFirst)}, 0, true, false, true},
		{"second only", []DigestSignature{sig(SandboxCertSecond)}, 0, true, false, true},
		{"first+second", []DigestSignature{sig(SandboxCertFirst), sig(SandboxCertSecond)}, 0, true, true, false},
		{"second+first", []DigestSignature{sig(SandboxCertSecond), sig(SandboxCertFirst)}, 0, true, true, false},
		{"qualified", []DigestSignature{qual}, 0, true, true, false},
		{"qualified without signType", []DigestSignature{sig(SandboxCertQualified)}, KindWorkflow, false, false, false},
		{"signType on a non-qualified cert", []DigestSignature{{Base64Encoded: "AQID", CertificateUUID: SandboxCertSole, SignType: SignTypeQualified}}, KindWorkflow, false, false, false},
		{"unknown uuid", []DigestSignature{sig("00000000-0000-4000-8000-000000000000")}, KindWorkflow, false, false, false},
		{"sole+first", []DigestSignature{sig(SandboxCertSole), sig(SandboxCertFirst)}, KindWorkflow, false, false, false},
		{"second+sole", []DigestSignature{sig(SandboxCertSecond), sig(SandboxCertSole)}, KindWorkflow, false, false, false},
		{"qualified+first", []DigestSignature{qual, sig(SandboxCertFirst)}, KindWorkflow, false, false, false},
		{"same cert twice", []DigestSignature{sig(SandboxCertFirst), sig(SandboxCertFirst)}, KindWorkflow, false, false, false},
		{"sole in upper case", []DigestSignature{sig(strings.ToUpper(SandboxCertSole))}, 0, true, true, false},
		{"first and second in upper case", []DigestSignature{sig(strings.ToUpper(SandboxCertFirst)), sig(strings.ToUpper(SandboxCertSecond))}, 0, true, true, false},
		{"same cert twice in two cases", []DigestSignature{sig(SandboxCertFirst), sig(strings.ToUpper(SandboxCertFirst))}, KindWorkflow, false, false, false},
		{"three", []DigestSignature{sig(SandboxCertFirst), sig(SandboxCertSecond), sig(SandboxCertSole)}, KindWorkflow, false, false, false},
		{"not base64", []DigestSignature{{Base64Encoded: "%%%", CertificateUUID: SandboxCertSole}}, KindValidation, false, false, false},
		{"empty signature", []DigestSignature{{CertificateUUID: SandboxCertSole}}, KindValidation, false, false, false},
		{"no uuid", []DigestSignature{{Base64Encoded: "AQID"}}, KindValidation, false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set, err := v.Verify(context.Background(), p, "digest", tt.sigs)
			if tt.ok {
				if err != nil {
					t.Fatalf("err %v", err)
				}
				if set.Complete() != tt.complete || set.Partial() != tt.partial {
					t.Fatalf("set %v complete=%v partial=%v", set.Roles, set.Complete(), set.Partial())
				}
				return
			}
			if err == nil || KindOf(err) != tt.kind {
				t.Fatalf("err %v (kind %d), want kind %d", err, KindOf(err), tt.kind)
			}
		})
	}
}

type signer struct {
	cert *gost.Certificate
	key  *gost.PrivateKey
}

func newSigner(t *testing.T, params *gost.Params) signer {
	t.Helper()
	key, err := gost.GenerateKey(params, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := gost.SelfSignedCertificate(key, "signer", time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	return signer{cert, key}
}

func (s signer) sign(t *testing.T, uuid, digest string) DigestSignature {
	t.Helper()
	return s.signWith(t, uuid, digest, gost.SignOptions{})
}

func (s signer) signWith(t *testing.T, uuid, digest string, opt gost.SignOptions) DigestSignature {
	t.Helper()
	cms, err := gost.SignDetachedWithOptions([]byte(digest), s.cert, s.key, opt)
	if err != nil {
		t.Fatal(err)
	}
	return DigestSignature{Base64Encoded: base64.StdEncoding.EncodeToString(cms), CertificateUUID: uuid}
}

// TestVerifiedSignatureRules runs the test contour with real GOST R
// 34.10-2012 CMS signatures over the digest text.
func TestVerifiedSignatureRules(t *testing.T) {
	const digest = "date=2026-01-01\namount=100.00\n"
	p := Principal{OrgID: "org", UserID: "u1"}
	a, b, other := newSigner(t, gost.TC26256A), newSigner(t, gost.TC26512A), newSigner(t, gost.TC26256A)
	certs := certMap{
		uSole:     {UUID: uSole, UserID: "u1", OrgID: "org", DER: a.cert.Raw, Role: RoleSoleAuthority, Active: true},
		uFirst:    {UUID: uFirst, UserID: "u1", OrgID: "org", DER: a.cert.Raw, Role: RoleFirst, Active: true},
		uSecond:   {UUID: uSecond, UserID: "u1", OrgID: "org", DER: b.cert.Raw, Role: RoleSecond, Active: true},
		uInactive: {UUID: uInactive, UserID: "u1", OrgID: "org", DER: a.cert.Raw, Role: RoleSoleAuthority, Active: false},
		uForeign:  {UUID: uForeign, UserID: "u2", OrgID: "org", DER: a.cert.Raw, Role: RoleSoleAuthority, Active: true},
	}
	for _, contour := range []string{ContourTest, ContourProduction} {
		v := NewSignatureVerifier(contour, certs)
		tests := []struct {
			name     string
			sigs     []DigestSignature
			kind     Kind
			ok       bool
			complete bool
		}{
			{"sole", []DigestSignature{a.sign(t, uSole, digest)}, 0, true, true},
			{"first+second (512-bit key)", []DigestSignature{a.sign(t, uFirst, digest), b.sign(t, uSecond, digest)}, 0, true, true},
			{"first only", []DigestSignature{a.sign(t, uFirst, digest)}, 0, true, false},
			{"sandbox uuid is not special", []DigestSignature{a.sign(t, SandboxCertSole, digest)}, KindSignCheck, false, false},
			{"other digest text", []DigestSignature{a.sign(t, uSole, digest+" ")}, KindSignCheck, false, false},
			{"other key", []DigestSignature{other.sign(t, uSole, digest)}, KindSignCheck, false, false},
			{"garbage CMS", []DigestSignature{sig(uSole)}, KindSignCheck, false, false},
			// A valid signature over the digest text, but in a SignedData
			// of id-ct-receipt, not §9.2's data: made for another purpose,
			// refused as other malformed CMS is.
			{"CMS of another content type", []DigestSignature{a.signWith(t, uSole, digest,
				gost.SignOptions{ContentType: asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 16, 1, 1}})}, KindSignCheck, false, false},
			{"inactive cert", []DigestSignature{a.sign(t, uInactive, digest)}, KindSignCheck, false, false},
			{"another user's cert", []DigestSignature{a.sign(t, uForeign, digest)}, KindSignCheck, false, false},
			{"sole+first", []DigestSignature{a.sign(t, uSole, digest), a.sign(t, uFirst, digest)}, KindWorkflow, false, false},
			{"same cert twice", []DigestSignature{a.sign(t, uFirst, digest), a.sign(t, uFirst, digest)}, KindWorkflow, false, false},
		}
		for _, tt := range tests {
			t.Run(contour+"/"+tt.name, func(t *testing.T) {
				set, err := v.Verify(context.Background(), p, digest, tt.sigs)
				if tt.ok {
					if err != nil || set.Complete() != tt.complete {
						t.Fatalf("set %v err %v", set.Roles, err)
					}
					return
				}
				if err == nil || KindOf(err) != tt.kind {
					t.Fatalf("err %v (kind %d), want %d", err, KindOf(err), tt.kind)
				}
			})
		}
		// The other content type's refusal is word for word the garbage
		// CMS's: the client learns the signature failed, not why.
		_, garbage := v.Verify(context.Background(), p, digest, tests[6].sigs)
		_, otherType := v.Verify(context.Background(), p, digest, tests[7].sigs)
		if tests[6].name != "garbage CMS" || garbage == nil || otherType == nil || garbage.Error() != otherType.Error() {
			t.Fatalf("%s: %s %v, %s %v: want one refusal", contour, tests[6].name, garbage, tests[7].name, otherType)
		}
	}
}

// TestSignatureVerifyDocumentForeign: a known, active certificate of someone other
// than the token's user is a SIGN_CHECK_EXCEPTION to Verify (card limits)
// and, to VerifyDocument (payments, reference §9.1), a counted role listed
// in Foreign once the signature is otherwise valid. In the sandbox the
// certificate uuid alone decides the outcome (§7): neither method reports a
// §7 certificate foreign, whichever user sends it.
func TestSignatureVerifyDocumentForeign(t *testing.T) {
	const digest = "date=2026-01-01\namount=100.00\n"
	p := Principal{OrgID: "org", UserID: "u1"}
	a, b := newSigner(t, gost.TC26256A), newSigner(t, gost.TC26256A)
	certs := certMap{
		uOwn:          {UUID: uOwn, UserID: "u1", OrgID: "org", DER: a.cert.Raw, Role: RoleFirst, Active: true},
		uColleague:    {UUID: uColleague, UserID: "u2", OrgID: "org", DER: b.cert.Raw, Role: RoleSecond, Active: true},
		uOtherOrg:     {UUID: uOtherOrg, UserID: "u3", OrgID: "org2", DER: b.cert.Raw, Role: RoleSoleAuthority, Active: true},
		uInactivePeer: {UUID: uInactivePeer, UserID: "u2", OrgID: "org", DER: b.cert.Raw, Role: RoleSoleAuthority, Active: false},
	}
	tests := []struct {
		name    string
		sigs    []DigestSignature
		kind    Kind     // VerifyDocument's error kind, 0: none
		foreign []string // VerifyDocument's Foreign
	}{
		{"own", []DigestSignature{a.sign(t, uOwn, digest)}, 0, nil},
		{"colleague", []DigestSignature{b.sign(t, uColleague, digest)}, 0, []string{uColleague}},
		{"own and colleague", []DigestSignature{a.sign(t, uOwn, digest), b.sign(t, uColleague, digest)}, 0, []string{uColleague}},
		{"another organisation", []DigestSignature{b.sign(t, uOtherOrg, digest)}, 0, []string{uOtherOrg}},
		{"colleague's uuid, not the colleague's signature", []DigestSignature{a.sign(t, uColleague, digest)}, KindSignCheck, nil},
		{"colleague, other digest", []DigestSignature{b.sign(t, uColleague, digest+" ")}, KindSignCheck, nil},
		{"inactive colleague", []DigestSignature{b.sign(t, uInactivePeer, digest)}, KindSignCheck, nil},
		{"unknown", []DigestSignature{b.sign(t, uNobody, digest)}, KindSignCheck, nil},
		{"colleague, qualified signType", []DigestSignature{{Base64Encoded: b.sign(t, uColleague, digest).Base64Encoded, CertificateUUID: uColleague, SignType: SignTypeQualified}}, KindWorkflow, nil},
	}
	for _, contour := range []string{ContourTest, ContourProduction} {
		v := NewSignatureVerifier(contour, certs)
		for _, tt := range tests {
			t.Run(contour+"/"+tt.name, func(t *testing.T) {
				set, err := v.VerifyDocument(context.Background(), p, digest, tt.sigs)
				if KindOf(err) != tt.kind || (tt.kind != 0) != (err != nil) || !slices.Equal(set.Foreign, tt.foreign) {
					t.Fatalf("VerifyDocument: set %+v err %v, want kind %d foreign %v", set, err, tt.kind, tt.foreign)
				}
				if tt.foreign != nil && len(set.Roles) != len(tt.sigs) {
					t.Fatalf("roles %v", set.Roles)
				}
				strict, err := v.Verify(context.Background(), p, digest, tt.sigs)
				if strict.Foreign != nil || (tt.foreign != nil && KindOf(err) != KindSignCheck) {
					t.Fatalf("Verify: set %+v err %v, want SIGN_CHECK_EXCEPTION", strict, err)
				}
			})
		}
	}
	sandbox := NewSignatureVerifier(ContourSandbox, certMap{})
	for _, who := range []Principal{{OrgID: SandboxOrgID, UserID: "colleague"}, {OrgID: "org2", UserID: SandboxUserID}} {
		set, err := sandbox.VerifyDocument(context.Background(), who, "digest", []DigestSignature{sig(SandboxCertSole)})
		if err != nil || set.Foreign != nil || !set.Complete() {
			t.Fatalf("sandbox VerifyDocument %+v: %+v %v", who, set, err)
		}
		if set, err := sandbox.Verify(context.Background(), who, "digest", []DigestSignature{sig(SandboxCertSole)}); err != nil || set.Foreign != nil || !set.Complete() {
			t.Fatalf("sandbox Verify %+v: %+v %v", who, set, err)
		}
	}
	own := Principal{OrgID: SandboxOrgID, UserID: SandboxUserID}
	if set, err := sandbox.VerifyDocument(context.Background(), own, "digest", []DigestSignature{sig(SandboxCertSole)}); err != nil || set.Foreign != nil {
		t.Fatalf("sandbox user: %+v %v", set, err)
	}
}

// TestSignatureCertificateUUIDFormat: a certificateUuid that is no UUID
// (reference §9.1: the uuid of a /v1/crypto certificateInfos entry; a UUID
// in both SDKs) is a pattern fault, 400 VALIDATION_FAULT naming the item's
// field, in every contour and for card limits (Verify) as for payments
// (VerifyDocument), not a certificate looked up and not found
// (SIGN_CHECK_EXCEPTION, or WORKFLOW_FAULT in the sandbox). A UUID in
// upper case is a UUID.
func TestSignatureCertificateUUIDFormat(t *testing.T) {
	const digest = "date=2026-01-01\namount=100.00\n"
	p := Principal{OrgID: "org", UserID: "u1"}
	for _, contour := range []string{ContourSandbox, ContourTest, ContourProduction} {
		v := NewSignatureVerifier(contour, certMap{})
		for _, tc := range []struct {
			name  string
			sigs  []DigestSignature
			field string // "" for a fault that is not the format's
		}{
			{"a name", []DigestSignature{sig("cert-1")}, "digestSignatures[0].certificateUuid"},
			{"braced", []DigestSignature{sig("{" + uSole + "}")}, "digestSignatures[0].certificateUuid"},
			{"no hyphens", []DigestSignature{sig(strings.ReplaceAll(uSole, "-", ""))}, "digestSignatures[0].certificateUuid"},
			{"trailing space", []DigestSignature{sig(SandboxCertFirst + " ")}, "digestSignatures[0].certificateUuid"},
			{"second item", []DigestSignature{sig(SandboxCertFirst), sig("second")}, "digestSignatures[1].certificateUuid"},
			{"upper case", []DigestSignature{sig(strings.ToUpper(uNobody))}, ""},
		} {
			for name, verify := range map[string]func(context.Context, Principal, string, []DigestSignature) (SignatureSet, error){
				"Verify": v.Verify, "VerifyDocument": v.VerifyDocument} {
				_, err := verify(context.Background(), p, digest, tc.sigs)
				var e *Error
				isFormat := errors.As(err, &e) && e.Kind == KindValidation && slices.Equal(e.FieldNames, []string{tc.field}) && slices.Equal(e.Checks, []string{"UUID"})
				if tc.field != "" && !isFormat || tc.field == "" && (err == nil || KindOf(err) == KindValidation) {
					t.Errorf("%s/%s/%s: %v", contour, tc.name, name, err)
				}
			}
		}
	}
}

// A certificate of another organisation tells the caller nothing an unknown
// uuid would not: refused by Verify (card limits), or signed over by a CMS
// that does not verify under it (VerifyDocument, payments), it is "not
// found" word for word, whether it exists, is active or has lapsed.
func TestSignatureOtherOrganisationsCertificatesLookUnknown(t *testing.T) {
	const digest = "date=2026-01-01\namount=100.00\n"
	p := Principal{OrgID: "org", UserID: "u1"}
	a, b := newSigner(t, gost.TC26256A), newSigner(t, gost.TC26256A)
	const uActive, uInactive = "0b7e4a8c-2f61-4d0e-9a53-6c1d2e3f4a51", "0b7e4a8c-2f61-4d0e-9a53-6c1d2e3f4a52"
	certs := certMap{
		uActive:   {UUID: uActive, UserID: "u3", OrgID: "org2", DER: b.cert.Raw, Role: RoleSoleAuthority, Active: true},
		uInactive: {UUID: uInactive, UserID: "u3", OrgID: "org2", DER: b.cert.Raw, Role: RoleSoleAuthority, Active: false},
	}
	v := NewSignatureVerifier(ContourProduction, certs)
	refusal := func(verify func(context.Context, Principal, string, []DigestSignature) (SignatureSet, error), uuid string) string {
		_, err := verify(context.Background(), p, digest, []DigestSignature{a.sign(t, uuid, digest)}) // a's key: not the certificate's
		if KindOf(err) != KindSignCheck {
			t.Fatalf("%s: %v, want SIGN_CHECK_EXCEPTION", uuid, err)
		}
		return strings.ReplaceAll(err.Error(), uuid, "UUID")
	}
	for name, verify := range map[string]func(context.Context, Principal, string, []DigestSignature) (SignatureSet, error){
		"Verify": v.Verify, "VerifyDocument": v.VerifyDocument} {
		unknown := refusal(verify, uNobody)
		for _, uuid := range []string{uActive, uInactive} {
			if got := refusal(verify, uuid); got != unknown {
				t.Errorf("%s: another organisation's certificate %s: %q, an unknown one %q", name, uuid, got, unknown)
			}
		}
	}
	// Its holder's own valid signature still reaches the certificate's
	// state: only a verified signature learns it.
	if _, err := v.VerifyDocument(context.Background(), p, digest, []DigestSignature{b.sign(t, uInactive, digest)}); KindOf(err) != KindSignCheck || !strings.Contains(err.Error(), "не активен") {
		t.Errorf("the holder's signature under an inactive certificate: %v", err)
	}
}
