package main

import (
	"testing"

	"partnerapi/internal/banking"
)

// The signature-set rules of reference §7 and §9.1 hold for card-limit
// applications as they do for payments (TestBankingSignatureSets), through
// the real server and its sandbox verifier: more than two signatures, or a
// sole-authority signature with another, are 400 WORKFLOW_FAULT, and the
// application is not stored; the sets §7 takes are EXPORTED or PARTSIGNED.
// Before, three signatures were VALIDATION_FAULT on card limits alone.
func TestBankingCardLimitSignatureSets(t *testing.T) {
	ts := startServer(t)
	base := ts.urls["banking"] + "/fintech/api/v1/business-cards/limits"
	tok := bankingToken(t, ts, banking.ScopeBusinessCardLimit)
	first, second, sole := banking.SandboxCertFirst, banking.SandboxCertSecond, banking.SandboxCertSole
	for i, tc := range []struct {
		name  string
		certs []string
		code  int
		want  string // bankStatus or cause
	}{
		{"first and second", []string{first, second}, 201, "EXPORTED"},
		{"first alone", []string{first}, 201, "PARTSIGNED"},
		{"three", []string{first, second, sole}, 400, "WORKFLOW_FAULT"},
		{"three of the pair", []string{first, second, first}, 400, "WORKFLOW_FAULT"},
		{"sole with first", []string{sole, first}, 400, "WORKFLOW_FAULT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ext := banking.NewUUID()
			body := map[string]any{"code": "NON_RENEW", "businessCardId": "sbc-00001", "externalId": ext, "limit": 10,
				"digestSignatures": signatureList(tc.certs...)}
			code, out := bankRequestJSON(t, "POST", base, tok, body)
			got, _ := out["bankStatus"].(string)
			if code != 201 {
				got, _ = out["cause"].(string)
			}
			if code != tc.code || got != tc.want {
				t.Fatalf("case %d: %d %v, want %d %s", i, code, out, tc.code, tc.want)
			}
			if code != 201 {
				if code, out := bankRequestJSON(t, "GET", base+"/"+ext+"/state", tok, nil); code != 404 {
					t.Fatalf("refused application stored: %d %v", code, out)
				}
			}
		})
	}
}
