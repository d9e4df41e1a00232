package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/banking/bankingsql"
	"partnerapi/internal/gost"
)

// bankingCLI runs `partnerapi banking args...` with stdin and decodes its
// JSON output.
func bankingCLI(t *testing.T, stdin string, args ...string) map[string]any {
	t.Helper()
	var out bytes.Buffer
	if err := runBanking(context.Background(), args, func(string) string { return "" },
		stdio{in: strings.NewReader(stdin), out: &out, err: io.Discard}); err != nil {
		t.Fatalf("banking %v: %v", args, err)
	}
	var m map[string]any
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatalf("banking %v: %v: %s", args, err, out.String())
	}
	return m
}

// TestBankingIdentityCLI provisions a new organisation in the test contour
// (no sandbox seed), signs a digest with the CLI and checks the signature
// with the real verifier, then serves client-info for the new organisation.
func TestBankingIdentityCLI(t *testing.T) {
	dir := t.TempDir()
	st := []string{"--data-dir", dir, "--banking-contour", "test"}
	org := bankingCLI(t, "", append([]string{"org", "create", "--name", "ООО Тест", "--inn", "7707083893", "--kpp", "773601001", "--ogrn", "1027700132195",
		"--address", "101000, г. Москва, ул. Мясницкая, д. 1", "--ter-bank", "Байкальский Банк Сбербанка РФ"}, st...)...)["id"].(string)
	bankingCLI(t, "", append([]string{"account", "add", "--org", org, "--number", "40702810538833411733", "--bic", "044525225", "--corr", "30101810400000000225"}, st...)...)
	user := bankingCLI(t, "", append([]string{"user", "create", "--org", org, "--login", "ivanov", "--password", "pw", "--phone", "+79161234567", "--executive"}, st...)...)["id"].(string)
	app := bankingCLI(t, "", append([]string{"app", "create", "--name", "Partner", "--redirect-uri", "https://p/cb"}, st...)...)
	if len(app["client_secret"].(string)) != 40 {
		t.Fatalf("app %v", app)
	}
	client := app["client_id"].(string)
	bankingCLI(t, "", append([]string{"offer", "sign", "--client", client, "--account", "40702810538833411733"}, st...)...)

	key, err := gost.GenerateKey(gost.TC26256A, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := gost.SelfSignedCertificate(key, "Иванов", time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	pemKey, err := gost.MarshalPrivateKeyPEM(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem")
	if err := os.WriteFile(certFile, cert.PEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pemKey, 0o600); err != nil {
		t.Fatal(err)
	}
	uuid := bankingCLI(t, "", append([]string{"cert", "add", "--user", user, "--cert", certFile, "--role", "sole"}, st...)...)["uuid"].(string)

	const digest = "amount=100.00\npurpose=Оплата\n"
	el := bankingCLI(t, digest, "sign", "--cert", certFile, "--key", keyFile, "--uuid", uuid)
	if el["certificateUuid"] != uuid || el["base64Encoded"] == "" {
		t.Fatalf("sign %v", el)
	}
	// A digest file written with echo: --trim-final-newline signs the digest itself.
	trimmed := bankingCLI(t, digest+"\n", "sign", "--cert", certFile, "--key", keyFile, "--uuid", uuid, "--trim-final-newline")
	tok := bankingCLI(t, "", append([]string{"token", "--scope", "GET_CLIENT_ACCOUNTS PAY_DOC_RU", "--org", org, "--client", client}, st...)...)
	if tok["scope"] != "GET_CLIENT_ACCOUNTS PAY_DOC_RU" || tok["expires_in"] != float64(3600) || tok["refresh_token"] == "" {
		t.Fatalf("token %v", tok)
	}

	// Verify the CLI's signature with the test-contour verifier over the store.
	var store storeConfig
	store.DataDir = dir
	db, err := store.open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ids := bankingsql.NewIdentityStore(db)
	if _, err := ids.GetOrg(context.Background(), banking.SandboxOrgID); err == nil {
		t.Fatal("the test contour seeded the sandbox organisation")
	}
	id := banking.NewIdentity(ids)
	p, err := id.Authenticate(context.Background(), tok["access_token"].(string))
	if err != nil || p.OrgID != org || p.UserID != user {
		t.Fatalf("principal %+v %v", p, err)
	}
	// The address, phone, territorial bank and executive given to the CLI
	// are user-info's claims.
	if ui, err := id.UserInfo(context.Background(), p); err != nil || ui.OrgJuridicalAddress != "101000, г. Москва, ул. Мясницкая, д. 1" || ui.PhoneNumber != "+79161234567" ||
		ui.TerBank != "Байкальский Банк Сбербанка РФ" || ui.IndividualExecutiveAgency != 1 {
		t.Fatalf("user-info %+v %v", ui, err)
	}
	v := banking.NewSignatureVerifier(banking.ContourTest, ids)
	ds := banking.DigestSignature{Base64Encoded: el["base64Encoded"].(string), CertificateUUID: uuid}
	if set, err := v.Verify(context.Background(), p, digest, []banking.DigestSignature{ds}); err != nil || !set.Complete() {
		t.Fatalf("verify CLI signature: %v %v", set, err)
	}
	ds2 := banking.DigestSignature{Base64Encoded: trimmed["base64Encoded"].(string), CertificateUUID: uuid}
	if _, err := v.Verify(context.Background(), p, digest, []banking.DigestSignature{ds2}); err != nil {
		t.Fatalf("trimmed digest signature: %v", err)
	}
	if _, err := v.Verify(context.Background(), p, strings.TrimSuffix(digest, "\n"), []banking.DigestSignature{ds}); banking.KindOf(err) != banking.KindSignCheck {
		t.Fatalf("other digest text: %v", err)
	}
}

func TestBankingCLIRejectsBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"nope"},
		{"token", "--data-dir", dir},
		{"token", "--data-dir", dir, "--scope", "X", "--org", "missing"},
		{"org", "create", "--data-dir", dir, "--name", "x", "--inn", "12"},
		{"account", "add", "--data-dir", dir, "--org", banking.SandboxOrgID, "--number", "123", "--bic", "044525225"},
		// Check digits and control keys of reference §5.1 and §5.4.
		{"org", "create", "--data-dir", dir, "--name", "x", "--inn", "7707083894"},
		{"org", "create", "--data-dir", dir, "--name", "x", "--inn", "7707083893", "--ogrn", "1027700132194"},
		{"account", "add", "--data-dir", dir, "--org", banking.SandboxOrgID, "--number", "40702810538833411734", "--bic", "044525225"},
		// A close date of an account that is not closed, or before its opening (reference §10).
		{"account", "add", "--data-dir", dir, "--org", banking.SandboxOrgID, "--number", "40702810100000000101", "--bic", "044525225", "--close-date", "2025-03-31"},
		{"account", "add", "--data-dir", dir, "--org", banking.SandboxOrgID, "--number", "40702810100000000101", "--bic", "044525225", "--status", "CLOSED", "--close-date", "2023-12-31"},
		{"token", "--data-dir", dir, "--scope", "X", "--banking-contour", "moon"},
		{"user", "create", "--data-dir", dir, "--org", banking.SandboxOrgID, "--login", "p", "--phone", "8 916 123-45-67"},
	} {
		err := runBanking(context.Background(), args, func(string) string { return "" }, stdio{in: strings.NewReader(""), out: io.Discard, err: io.Discard})
		if err == nil {
			t.Errorf("banking %v: no error", args)
		}
	}
}

// TestBankingCLIAccountAddRefusesTreasuryBIC: the bank is a credit
// institution, so its accounts carry a BIC opening with 04 (reference
// §5.3); a treasury (TOFK) BIC, 0 but not 04, is refused with a message
// naming it, even for a number whose control key fits it.
func TestBankingCLIAccountAddRefusesTreasuryBIC(t *testing.T) {
	dir := t.TempDir()
	err := runBanking(context.Background(), []string{"account", "add", "--data-dir", dir, "--org", banking.SandboxOrgID,
		"--number", "40702810900000000001", "--bic", "017003983"}, func(string) string { return "" },
		stdio{in: strings.NewReader(""), out: io.Discard, err: io.Discard})
	if err == nil || !strings.Contains(err.Error(), "bic") || !strings.Contains(err.Error(), "opens with 04") || !strings.Contains(err.Error(), "017003983") {
		t.Fatalf("account add --bic 017003983: %v, want a refusal naming the BIC and 04", err)
	}
}

// TestBankingSandboxEndToEnd: the sandbox seed through the real server,
// with a token from the CLI.
func TestBankingSandboxEndToEnd(t *testing.T) {
	ts := startServer(t, "--only", "banking")
	tok := bankingCLI(t, "", "token", "--scope", "GET_CLIENT_ACCOUNTS GET_CRYPTO_INFO", "--data-dir", ts.dataDir)["access_token"].(string)
	resp, body := get(t, ts.urls["banking"]+"/fintech/api/v1/client-info", "Authorization", "Bearer "+tok)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), banking.SandboxAccount) {
		t.Fatalf("client-info %d %s", resp.StatusCode, body)
	}
	resp, body = get(t, ts.urls["banking"]+"/fintech/api/v1/crypto", "Authorization", tok)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), banking.SandboxCertQualified) {
		t.Fatalf("crypto %d %s", resp.StatusCode, body)
	}
	resp, _ = get(t, ts.urls["banking"]+"/fintech/api/v1/crypto/eio", "Authorization", tok)
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("eio without scope: %d", resp.StatusCode)
	}

	// OAuth with the seeded sandbox app (after giving it a known secret)
	// and the seeded sandbox user.
	secret := bankingCLI(t, "", "app", "secret", "--data-dir", ts.dataDir)["client_secret"].(string)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.PostForm(ts.urls["banking"]+"/ic/sso/api/v2/oauth/authorize", url.Values{
		"response_type": {"code"}, "client_id": {banking.SandboxClientID}, "redirect_uri": {banking.SandboxRedirectURI},
		"scope": {"openid GET_CLIENT_ACCOUNTS"}, "state": {"s1"}, "login": {banking.SandboxUserLogin},
		"password": {banking.SandboxUserPassword}, "consent": {"allow"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || loc.Query().Get("code") == "" {
		t.Fatalf("authorize %d %v", resp.StatusCode, loc)
	}
	resp, err = http.PostForm(ts.urls["banking"]+"/ic/sso/api/v2/oauth/token", url.Values{"grant_type": {"authorization_code"},
		"code": {loc.Query().Get("code")}, "client_id": {banking.SandboxClientID}, "client_secret": {secret},
		"redirect_uri": {banking.SandboxRedirectURI}})
	if err != nil {
		t.Fatal(err)
	}
	var pair banking.TokenPair
	_ = json.NewDecoder(resp.Body).Decode(&pair)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || pair.AccessToken == "" {
		t.Fatalf("token %d %+v", resp.StatusCode, pair)
	}
	if pair.IDToken == "" {
		t.Fatal("openid grant without id_token")
	}
	// The id_token is signed with the bank's key, whose certificate
	// partners get from `banking jws-certificate`.
	bankCert := bankingJWSCertificate(t, "--data-dir", ts.dataDir)
	if idt, err := gost.ParseJWS(pair.IDToken); err != nil || idt.Verify(bankCert) != nil || idt.Header.Kid != banking.BankCertificateID(bankCert) {
		t.Fatalf("id_token does not verify with the bank's certificate: %v", err)
	}
	resp, body = get(t, ts.urls["banking"]+"/ic/sso/api/v2/oauth/user-info", "Authorization", "Bearer "+pair.AccessToken, "Accept", "application/json")
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), banking.SandboxOrgINN) {
		t.Fatalf("user-info %d %s", resp.StatusCode, body)
	}
	resp, body = get(t, ts.urls["banking"]+"/ic/sso/api/v2/oauth/user-info", "Authorization", "Bearer "+pair.AccessToken)
	if jws, err := gost.ParseJWS(string(body)); resp.StatusCode != http.StatusOK || err != nil || !strings.Contains(string(jws.Payload), banking.SandboxOrgINN) || jws.Verify(bankCert) != nil {
		t.Fatalf("user-info JWT %d %s %v", resp.StatusCode, body, err)
	}
}
