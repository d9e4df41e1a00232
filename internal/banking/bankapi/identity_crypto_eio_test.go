package bankapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"partnerapi/internal/banking"
)

// javaCryptoInfoEIO mirrors the Java SDK's CryptoInfoEIOResponse,
// CryptoUserInfo, CryptoProfileInfo and CertificateInfo: the SDK's Jackson
// mapper fails on a property they lack, as decoding with
// DisallowUnknownFields does here.
type javaCryptoInfoEIO struct {
	CertCenterCode  *string  `json:"certCenterCode"`
	CertCenterNum   *string  `json:"certCenterNum"`
	CertsCA         []string `json:"certsCA"`
	CryptoUserInfos []struct {
		Sub                string `json:"sub"`
		CryptoProfileInfos []struct {
			Alias            string `json:"alias"`
			TypeName         string `json:"typeName"`
			CertificateInfos []struct {
				Active       *bool  `json:"active"`
				Cert         string `json:"cert"`
				Issuer       string `json:"issuer"`
				SerialNumber string `json:"serialNumber"`
				UUID         string `json:"uuid"`
			} `json:"certificateInfos"`
		} `json:"cryptoProfileInfos"`
	} `json:"cryptoUserInfos"`
}

// TestCryptoInfoEIOJavaShape: GET /v1/crypto/eio answers the shape the Java
// SDK's getCryptoEio reads (reference §10, "similar" to /v1/crypto):
// certsCA and one cryptoUserInfos entry per user of the organisation, sub
// its id, with the user's certificates grouped as /v1/crypto groups them.
// Before, it answered /v1/crypto's shape, whose certBank, certBankUuid and
// top-level cryptoProfileInfos the SDK's Jackson refused.
func TestCryptoInfoEIOJavaShape(t *testing.T) {
	e := newIDEnv(t)
	ctx := context.Background()
	// A second user of the organisation, without certificates.
	clerk := banking.User{ID: "9d7a1c2e-0000-4000-8000-00000000c1e7", OrgID: banking.SandboxOrgID, Login: "zz-clerk", Name: "Петров Пётр"}
	if err := e.id.Store.CreateUser(ctx, clerk); err != nil {
		t.Fatal(err)
	}
	key, err := banking.NewBankKey(e.now)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(NewServer(Deps{Auth: e.id, Identity: e.id, JWS: key}))
	defer srv.Close()
	tok := e.token(t, banking.ScopeGetCryptoInfoEIO)
	req, _ := http.NewRequest("GET", srv.URL+"/fintech/api/v1/crypto/eio", nil)
	req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, raw)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var ci javaCryptoInfoEIO
	if err := dec.Decode(&ci); err != nil {
		t.Fatalf("the Java SDK cannot read the answer: %v\n%s", err, raw)
	}
	if len(ci.CertsCA) != 1 || ci.CertsCA[0] != base64.StdEncoding.EncodeToString(key.Cert.Raw) {
		t.Fatalf("certsCA %v, want the bank's certificate", ci.CertsCA)
	}
	var subs []string
	certs := map[string][]string{}
	for _, u := range ci.CryptoUserInfos {
		subs = append(subs, u.Sub)
		for _, p := range u.CryptoProfileInfos {
			for _, c := range p.CertificateInfos {
				if c.Active == nil || !*c.Active || c.Cert == "" || c.SerialNumber == "" {
					t.Fatalf("certificate %s of %s: %+v", c.UUID, u.Sub, c)
				}
				certs[u.Sub] = append(certs[u.Sub], c.UUID)
			}
		}
	}
	if !slices.Equal(subs, []string{banking.SandboxUserID, clerk.ID}) {
		t.Fatalf("subs %v, want the sandbox user and the clerk in login order", subs)
	}
	slices.Sort(certs[banking.SandboxUserID])
	want := []string{banking.SandboxCertSole, banking.SandboxCertFirst, banking.SandboxCertSecond, banking.SandboxCertQualified}
	slices.Sort(want)
	if !slices.Equal(certs[banking.SandboxUserID], want) || len(certs[clerk.ID]) != 0 {
		t.Fatalf("certificates by user %v, want the four sandbox ones under the sandbox user", certs)
	}
}
