package main

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"partnerapi/internal/banking"
	"partnerapi/internal/banking/bankkeys"
	"partnerapi/internal/gost"
)

// userInfoJWT fetches the user-info JWT of a fresh openid token.
func userInfoJWT(t *testing.T, ts *testServer) string {
	t.Helper()
	req, _ := http.NewRequest("GET", ts.urls["banking"]+"/ic/sso/api/v2/oauth/user-info", nil)
	req.Header.Set("Authorization", "Bearer "+bankingToken(t, ts, banking.ScopeOpenID))
	req.Header.Set("Accept", "application/jwt")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/jwt" {
		t.Fatalf("user-info %d %s", resp.StatusCode, body)
	}
	return string(body)
}

// TestBankingIDTokenAlg: by default the user-info JWT (signed as id_tokens
// are) has the header {"typ":"JWT","alg":"gost34.10-2012","kid"} and
// verifies with the bank's certificate; with --banking-id-token-alg RS256
// it is RS256 under the data directory's RSA key, the same key on a
// restart, which `banking id-token-key` prints; any other alg stops serve.
func TestBankingIDTokenAlg(t *testing.T) {
	gostServer := startServer(t, "--only", "banking")
	j, err := gost.ParseJWS(userInfoJWT(t, gostServer))
	if err != nil || j.Header.Typ != "JWT" {
		t.Fatalf("GOST user-info JWT %+v %v", j, err)
	}
	var cert bytes.Buffer
	if err := runBanking(context.Background(), []string{"jws-certificate", "--data-dir", gostServer.dataDir}, func(string) string { return "" },
		stdio{in: strings.NewReader(""), out: &cert, err: io.Discard}); err != nil {
		t.Fatal(err)
	}
	c, err := gost.ParseCertificate(cert.Bytes())
	if err != nil || j.Verify(c) != nil || j.Header.Kid != banking.BankCertificateID(c) {
		t.Fatalf("GOST user-info JWT does not verify with the bank's certificate: %v", err)
	}

	rsServer := startServer(t, "--only", "banking", "--banking-id-token-alg", "RS256")
	tok := userInfoJWT(t, rsServer)
	var out bytes.Buffer
	if err := runBanking(context.Background(), []string{"id-token-key", "--data-dir", rsServer.dataDir}, func(string) string { return "" },
		stdio{in: strings.NewReader(""), out: &out, err: io.Discard}); err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(out.Bytes())
	if block == nil || block.Type != "PUBLIC KEY" {
		t.Fatalf("id-token-key printed %q", out.String())
	}
	pk, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	pub := pk.(*rsa.PublicKey)
	parts := strings.Split(tok, ".")
	hdr, _ := base64.RawURLEncoding.DecodeString(parts[0])
	var h map[string]string
	if json.Unmarshal(hdr, &h); h["typ"] != "JWT" || h["alg"] != "RS256" || h["kid"] != banking.RSAKeyID(pub) {
		t.Fatalf("RS256 header %s", hdr)
	}
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], sig); err != nil {
		t.Fatalf("RS256 user-info JWT does not verify with the printed key: %v", err)
	}
	// The key was kept in the data directory for the next start.
	if k, err := bankkeys.LoadIDTokenRSAKey(filepath.Join(rsServer.dataDir, bankkeys.IDTokenRSAKeyFile)); err != nil || !k.PublicKey.Equal(pub) {
		t.Fatalf("kept key %v", err)
	}

	for _, alg := range []string{"HS256", "rs256", "none"} {
		err := serve(context.Background(), []string{"--data-dir", t.TempDir(), "--only", "banking", "--banking-addr", "127.0.0.1:0", "--banking-id-token-alg", alg},
			func(string) string { return "" }, stdio{in: strings.NewReader(""), out: io.Discard, err: io.Discard}, nil)
		if err == nil || !strings.Contains(err.Error(), "banking-id-token-alg") {
			t.Errorf("alg %q: %v", alg, err)
		}
	}
}
