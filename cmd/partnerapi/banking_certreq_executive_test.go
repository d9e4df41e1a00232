package main

import (
	"encoding/json"
	"net/http"
	"testing"

	"partnerapi/internal/banking"
	"partnerapi/internal/gost"
)

// userInfoClaims are the claims of user-info for an openid token of user in
// w's organisation A, read both ways a client reads them: as JSON and as
// the JWT, whose signature must verify with the bank's certificate.
func (w *certReqWorld) userInfoClaims(t *testing.T, tok string) (plain, signed map[string]any) {
	t.Helper()
	const path = "/ic/sso/api/v2/oauth/user-info"
	resp, body := get(t, w.ts.urls["banking"]+path, "Authorization", tok, "Accept", "application/json")
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &plain) != nil {
		t.Fatalf("user-info JSON: %d %s", resp.StatusCode, body)
	}
	resp, body = get(t, w.ts.urls["banking"]+path, "Authorization", tok, "Accept", "application/jwt")
	jws, err := gost.ParseJWS(string(body))
	if resp.StatusCode != http.StatusOK || err != nil {
		t.Fatalf("user-info JWT: %d %s %v", resp.StatusCode, body, err)
	}
	if _, bank := w.certInfos(t, w.tokU1); jws.Verify(bank) != nil {
		t.Fatal("the user-info JWT does not verify with the bank's certificate")
	}
	if err := json.Unmarshal(jws.Payload, &signed); err != nil {
		t.Fatalf("user-info JWT payload %s: %v", jws.Payload, err)
	}
	return plain, signed
}

// TestEIOCertRequestMakesUserInfoExecutive follows individualExecutiveAgency
// over HTTP from a user made without --executive to the sole executive
// body: user-info says 0 (JSON and JWT alike), still 0 once u1 has filed an
// EIO certificate request naming u2's login, and 1 for u2 once the request
// is activated the way each contour activates it (the API's eio path in
// the test contour; in production the bank's `banking cert-request
// activate`, the API refusing), on the token u2 already had. u1, who sent
// the request, stays 0.
func TestEIOCertRequestMakesUserInfoExecutive(t *testing.T) {
	for _, tc := range []struct {
		contour  string
		activate func(t *testing.T, w *certReqWorld, id string)
	}{
		{banking.ContourTest, func(t *testing.T, w *certReqWorld, id string) {
			code, m := bankRequestJSON(t, "POST", w.url("/v1/crypto/cert-requests/eio/"+id+"/activate"), w.tokU1, nil)
			if code != http.StatusCreated || m["bankStatus"] != banking.CertRequestActivated {
				t.Fatalf("activate through the API: %d %v", code, m)
			}
		}},
		{banking.ContourProduction, func(t *testing.T, w *certReqWorld, id string) {
			if code, m := bankRequestJSON(t, "POST", w.url("/v1/crypto/cert-requests/eio/"+id+"/activate"), w.tokU1, nil); code != 400 || m["cause"] != "WORKFLOW_FAULT" {
				t.Fatalf("activate through the API in production: %d %v", code, m)
			}
			st := bankingCLI(t, "", "cert-request", "activate", "--org", w.orgA, "--external-id", id,
				"--data-dir", w.ts.dataDir, "--banking-contour", banking.ContourProduction)
			if st["bankStatus"] != banking.CertRequestActivated {
				t.Fatalf("activation at the bank: %v", st)
			}
		}},
	} {
		t.Run(tc.contour, func(t *testing.T) {
			w := newCertReqWorldIn(t, tc.contour)
			openid := func(user string) string {
				m := bankingCLI(t, "", "token", "--scope", banking.ScopeOpenID, "--org", w.orgA, "--user", user, "--client", w.client,
					"--data-dir", w.ts.dataDir, "--banking-contour", tc.contour)
				return "Bearer " + m["access_token"].(string)
			}
			tokU1, tokU2 := openid(w.userU1), openid(w.userU2)
			expect := func(when, who, tok string, want float64) {
				t.Helper()
				plain, signed := w.userInfoClaims(t, tok)
				for form, claims := range map[string]map[string]any{"JSON": plain, "JWT": signed} {
					if got, ok := claims["individualExecutiveAgency"].(float64); !ok || got != want {
						t.Errorf("%s, %s's user-info %s: individualExecutiveAgency %v, want %v", when, who, form, claims["individualExecutiveAgency"], want)
					}
				}
			}
			expect("before any request", "u2", tokU2, 0)

			const id = "f2000000-0000-4000-8000-000000000001"
			_, body := ivanovCertRequest(t, id, "3")
			body["login"] = "u2"
			if code, m := bankRequestJSON(t, "POST", w.url("/v1/crypto/cert-requests/eio"), w.tokU1, body); code != http.StatusCreated || m["login"] != "u2" {
				t.Fatalf("EIO create: %d %v", code, m)
			}
			expect("after the request was filed", "u2", tokU2, 0)

			tc.activate(t, w, id)
			expect("after activation", "u2", tokU2, 1)
			expect("after activation", "u1", tokU1, 0)
			// The issued certificate is u2's right to sign, which user-info
			// tells as well.
			if plain, _ := w.userInfoClaims(t, tokU2); plain["isIdentified"] != true {
				t.Errorf("after activation u2's isIdentified is %v", plain["isIdentified"])
			}
		})
	}
}
