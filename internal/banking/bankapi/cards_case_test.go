package bankapi

import (
	"crypto/rand"
	"encoding/json"
	"strings"
	"testing"

	"partnerapi/internal/banking"
	"partnerapi/internal/gost"
)

// A card-limit application's externalId keeps the partner's text: the
// signed digest is built over it as sent and the 201 echoes it, while the
// same UUID in another case is the same application (its state found, a
// second create a duplicate).
func TestCardLimitExternalIDCase(t *testing.T) {
	const path = "/fintech/api/v1/business-cards/limits"
	const upper = "4F9C2A1E-8B3D-4C5E-9F6A-7B8C9D0E1F2A"
	lower := strings.ToLower(upper)
	e := newCardEnv(t, 10)
	for _, tc := range []struct {
		name, method, path, body string
		code                     int
		want                     string // in the answer
	}{
		{"create signed, upper case", "POST", path, limitBody("sbc-00001", upper, "100", sole), 201, `"externalId":"` + upper + `"`},
		{"state by the upper case", "GET", path + "/" + upper + "/state", "", 200, `"bankStatus":"EXPORTED"`},
		{"state by the lower case", "GET", path + "/" + lower + "/state", "", 200, `"bankStatus":"EXPORTED"`},
		{"the lower case again is a duplicate", "POST", path, limitBody("sbc-00001", lower, "5"), 400, "WORKFLOW_FAULT"},
		{"the upper case again is a duplicate", "POST", path, limitBody("sbc-00005", upper, "5"), 400, "WORKFLOW_FAULT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctype := ""
			if tc.method == "POST" {
				ctype = "application/json"
			}
			code, body := e.do(tc.method, tc.path, ctype, tc.body)
			if code != tc.code || !strings.Contains(body, tc.want) {
				t.Fatalf("%d %s, want %d with %s", code, body, tc.code, tc.want)
			}
		})
	}
	if got, want := e.ver.digests[0], "businessCardId=sbc-00001\ncode=NON_RENEW\nexternalId="+upper+"\nlimit=100.00"; got != want {
		t.Errorf("digest %q, want %q: the partner signs the id it sent", got, want)
	}
	var l banking.LimitChange
	_, body := e.do("POST", path, "application/json", limitBody("sbc-00005", "0A0B0C0D-0000-4000-8000-00000000000A", "0"))
	if json.Unmarshal([]byte(body), &l) != nil || l.ExternalID != "0A0B0C0D-0000-4000-8000-00000000000A" {
		t.Errorf("echo %s", body)
	}
}

// The sandbox's fixed certificates are named by uuid in either case
// (IsCanonicalUUID accepts upper-case hex digits): as a JWS kid of a card
// limit and as a payment's certificateUuid.
func TestSandboxCertificateUUIDCase(t *testing.T) {
	other, err := gost.GenerateKey(gost.TC26256A, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	e := newCardEnv(t, 10)
	p := newPayEnv(t)
	p.svc.Verifier = banking.NewSignatureVerifier(banking.ContourSandbox, nil)
	for i, kid := range []string{banking.SandboxCertSole, strings.ToUpper(banking.SandboxCertSole)} {
		jws, err := gost.SignJWS([]byte(limitBody("sbc-00001", newUUID(1500+i), "1")), kid, other)
		if err != nil {
			t.Fatal(err)
		}
		if code, body := e.do("POST", "/fintech/api/v1/business-cards/limits", "application/jose", jws); code != 201 {
			t.Errorf("JWS kid %s: %d %s", kid, code, body)
		}
		st, m, raw := p.do("POST", paymentsBase, "pay", payDoc(newUUID(1510+i), map[string]any{"digestSignatures": sigs(kid)}))
		if st != 201 || m["bankStatus"] != "IMPLEMENTED" {
			t.Errorf("certificateUuid %s: %d %s", kid, st, raw)
		}
	}
}

// A limit application's member names match exactly: "LIMIT" beside
// "limit" is ignored whichever comes first (encoding/json would take the
// last), and alone it is no limit at all.
func TestCardLimitMemberNameCase(t *testing.T) {
	const path = "/fintech/api/v1/business-cards/limits"
	e := newCardEnv(t, 10)
	for _, tc := range []struct {
		name, body string
		code       int
		want       string // in the answer
	}{
		{"LIMIT after limit", `{"code":"NON_RENEW","businessCardId":"sbc-00001","externalId":"0A0B0C0D-0000-4000-8000-000000000101","limit":1,"LIMIT":100}`, 201, `"limit":1.00`},
		{"LIMIT before limit", `{"code":"NON_RENEW","businessCardId":"sbc-00001","externalId":"0A0B0C0D-0000-4000-8000-000000000102","LIMIT":100,"limit":2}`, 201, `"limit":2.00`},
		{"Limit alone", `{"code":"NON_RENEW","businessCardId":"sbc-00001","externalId":"0A0B0C0D-0000-4000-8000-000000000103","Limit":3}`, 400, "VALIDATION_FAULT"},
		{"BusinessCardId", `{"code":"NON_RENEW","BusinessCardId":"sbc-00001","externalId":"0A0B0C0D-0000-4000-8000-000000000104","limit":4}`, 400, "businessCardId"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := e.do("POST", path, "application/json", tc.body)
			if code != tc.code || !strings.Contains(body, tc.want) {
				t.Fatalf("%d %s, want %d with %s", code, body, tc.code, tc.want)
			}
		})
	}
}
