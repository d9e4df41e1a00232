package main

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/pem"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/gost"
)

// certReqWorld is a test-contour server (real GOST verification of
// payments, reference §9.1) with organisation A (users u1, u2, the
// sandbox's INN and account) and organisation B (user b1), and tokens of
// u1, u2 and b1 for the crypto and payment scopes.
type certReqWorld struct {
	ts            *testServer
	tokU1, tokU2  string
	tokB          string
	userU1        string
	userU2, userB string
	orgA          string
	client        string // the partner's client_id, registered for any scope
}

func newCertReqWorld(t *testing.T) *certReqWorld {
	t.Helper()
	return newCertReqWorldIn(t, banking.ContourTest)
}

// newCertReqWorldIn is the world of a server in contour.
func newCertReqWorldIn(t *testing.T, contour string) *certReqWorld {
	t.Helper()
	w := &certReqWorld{ts: startServer(t, "--only", "banking", "--banking-contour", contour)}
	cli := func(args ...string) map[string]any {
		return bankingCLI(t, "", append(args, "--data-dir", w.ts.dataDir, "--banking-contour", contour)...)
	}
	str := func(m map[string]any, k string) string { return m[k].(string) }
	orgA := str(cli("org", "create", "--name", "ООО А", "--inn", banking.SandboxOrgINN, "--kpp", banking.SandboxOrgKPP), "id")
	cli("account", "add", "--org", orgA, "--number", banking.SandboxAccount, "--bic", banking.SandboxBIC, "--corr", banking.SandboxCorrAccount)
	u1 := str(cli("user", "create", "--org", orgA, "--login", "u1"), "id")
	w.userU1 = u1
	w.userU2 = str(cli("user", "create", "--org", orgA, "--login", "u2"), "id")
	orgB := str(cli("org", "create", "--name", "ООО Б", "--inn", "7830002293", "--kpp", "783001001"), "id")
	w.userB = str(cli("user", "create", "--org", orgB, "--login", "b1"), "id")
	client := str(cli("app", "create", "--name", "Partner", "--redirect-uri", "https://p/cb"), "client_id")
	token := func(org, user string) string {
		return "Bearer " + str(cli("token", "--scope", "GET_CRYPTO_INFO PAY_DOC_RU", "--org", org, "--user", user, "--client", client), "access_token")
	}
	w.tokU1, w.tokU2, w.tokB = token(orgA, u1), token(orgA, w.userU2), token(orgB, w.userB)
	w.orgA, w.client = orgA, client
	return w
}

func (w *certReqWorld) url(path string) string { return w.ts.urls["banking"] + "/fintech/api" + path }

// certInfos are the certificateInfos of GET /v1/crypto for tok, by uuid,
// and the bank's certificate.
func (w *certReqWorld) certInfos(t *testing.T, tok string) (map[string]map[string]any, *gost.Certificate) {
	t.Helper()
	code, m := bankRequestJSON(t, "GET", w.url("/v1/crypto"), tok, nil)
	if code != http.StatusOK {
		t.Fatalf("crypto: %d %v", code, m)
	}
	bank, err := gost.ParseCertificate([]byte(m["certBank"].(string)))
	if err != nil {
		t.Fatalf("certBank: %v", err)
	}
	// The issuing CA of activated requests' certificates is listed.
	if ca, _ := m["certsCA"].([]any); len(ca) != 1 || ca[0] != m["certBank"] {
		t.Fatalf("certsCA %v, want certBank alone", m["certsCA"])
	}
	out := map[string]map[string]any{}
	for _, p := range m["cryptoProfileInfos"].([]any) {
		profile := p.(map[string]any)
		for _, c := range profile["certificateInfos"].([]any) {
			ci := c.(map[string]any)
			ci["typeName"] = profile["typeName"]
			out[ci["uuid"].(string)] = ci
		}
	}
	return out, bank
}

// state is a certificate request's state as tok reads it.
func (w *certReqWorld) state(t *testing.T, tok, id string) (int, map[string]any) {
	t.Helper()
	return bankRequestJSON(t, "GET", w.url("/v1/crypto/cert-requests/"+id+"/state"), tok, nil)
}

// ivanovCertRequest is a new GOST key and the body of a certificate
// request for it (PEM, as the SDK's sample), of externalId id.
func ivanovCertRequest(t *testing.T, id, number string) (*gost.PrivateKey, map[string]any) {
	t.Helper()
	key, err := gost.GenerateKey(gost.TC26256A, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := gost.CreateCertificateRequest(key, "Иванов Иван Иванович", "A00TEST.ИВАНОВ И И")
	if err != nil {
		t.Fatal(err)
	}
	return key, map[string]any{"externalId": id, "number": number, "userName": "Иванов Иван Иванович", "orgName": "ООО А",
		"email": "ivanov@example.com", "userPosition": "Директор", "bankStatus": nil, "bankComment": nil,
		"pkcs10": map[string]any{"bicryptId": "A00TEST.ИВАНОВ И И", "cms": string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))}}
}

var certUUIDInComment = regexp.MustCompile(`сертификат ([0-9a-f-]{36}) выпущен`)

// TestCertRequestEndToEnd: a partner sends a user's GOST key as a PKCS#10
// request (PEM, as the SDK's sample), prints the form and activates it;
// the bank's certificate for the key then appears in GET /v1/crypto,
// issued by certBank, and a payment signed with the key under that
// certificate's uuid is IMPLEMENTED in the test contour, where signatures
// are verified. None of these routes existed before.
func TestCertRequestEndToEnd(t *testing.T) {
	w := newCertReqWorld(t)
	const id = "f0000000-0000-4000-8000-000000000001"
	key, body := ivanovCertRequest(t, id, "1")
	before, _ := w.certInfos(t, w.tokU1)

	code, created := bankRequestJSON(t, "POST", w.url("/v1/crypto/cert-requests"), w.tokU1, body)
	if code != http.StatusCreated || created["bankStatus"] != banking.CertRequestCreated || created["externalId"] != id {
		t.Fatalf("create: %d %v", code, created)
	}
	// The Java SDK's Jackson fails on properties its CertRequest lacks.
	for k := range created {
		if !slices.Contains([]string{"externalId", "number", "userName", "orgName", "email", "userPosition", "pkcs10", "bankStatus", "bankComment"}, k) {
			t.Errorf("create answered %q, which the SDK's CertRequest does not have", k)
		}
	}
	if code, m := bankRequestJSON(t, "POST", w.url("/v1/crypto/cert-requests"), w.tokU1, body); code != 400 || m["cause"] != "WORKFLOW_FAULT" {
		t.Fatalf("the same externalId again: %d %v", code, m)
	}

	// Another organisation sees nothing of it and cannot move it.
	for _, c := range []struct{ method, path string }{{"GET", "/state"}, {"GET", "/print"}, {"POST", "/activate"}, {"POST", "/eio/" + id + "/activate"}} {
		path := "/v1/crypto/cert-requests/" + id + c.path
		if strings.HasPrefix(c.path, "/eio/") {
			path = "/v1/crypto/cert-requests" + c.path
		}
		if code, m := bankRequestJSON(t, c.method, w.url(path), w.tokB, nil); code != 404 || m["cause"] != "DATA_NOT_FOUND_EXCEPTION" {
			t.Fatalf("%s %s by another organisation: %d %v", c.method, path, code, m)
		}
	}
	if code, st := w.state(t, w.tokU1, id); code != 200 || st["bankStatus"] != banking.CertRequestCreated || st["channelInfo"] != "API" {
		t.Fatalf("state after foreign calls: %d %v", code, st)
	}

	code, pdf := bankRequest(t, "GET", w.url("/v2/crypto/cert-requests/"+id+"/print"), w.tokU1, nil)
	if code != 200 || !bytes.HasPrefix(pdf, []byte("%PDF-1.4")) || !bytes.HasSuffix(pdf, []byte("%%EOF\n")) {
		t.Fatalf("print: %d %.40q", code, pdf)
	}
	if _, st := w.state(t, w.tokU1, id); st["bankStatus"] != banking.CertRequestPrinted || !strings.Contains(st["bankComment"].(string), "бланк сформирован") {
		t.Fatalf("state after print: %v", st)
	}

	// The Java SDK activates through the eio path.
	code, act := bankRequestJSON(t, "POST", w.url("/v1/crypto/cert-requests/eio/"+id+"/activate"), w.tokU1, nil)
	if code != http.StatusCreated || act["bankStatus"] != banking.CertRequestActivated {
		t.Fatalf("activate: %d %v", code, act)
	}
	match := certUUIDInComment.FindStringSubmatch(act["bankComment"].(string))
	if match == nil {
		t.Fatalf("the activated state names no certificate: %v", act)
	}
	uuid := match[1]
	after, bank := w.certInfos(t, w.tokU1)
	info, ok := after[uuid]
	if !ok || len(after) != len(before)+1 || info["active"] != true || info["typeName"] != banking.IssuedCertType {
		t.Fatalf("GET /v1/crypto after activation: %v (before %d)", after, len(before))
	}
	cert, err := gost.ParseCertificate([]byte(info["cert"].(string)))
	if err != nil {
		t.Fatal(err)
	}
	if !cert.PublicKey.Equal(key.Public()) || cert.CheckSignatureFrom(bank) != nil || info["issuer"] != bank.Subject || cert.Subject != "CN=Иванов Иван Иванович" {
		t.Fatalf("issued certificate: subject %s issuer %v, bank %s", cert.Subject, info["issuer"], bank.Subject)
	}
	if code, m := bankRequestJSON(t, "POST", w.url("/v1/crypto/cert-requests/"+id+"/activate"), w.tokU1, nil); code != 400 || m["cause"] != "WORKFLOW_FAULT" {
		t.Fatalf("second activation: %d %v", code, m)
	}

	// A payment signed with the request's key under the issued uuid
	// reaches its final status; a signature by another key under the same
	// uuid is refused, so the check is real.
	pay := func(docID string, signerCert *gost.Certificate, signer *gost.PrivateKey) (int, map[string]any) {
		var d banking.Payment
		if !banking.DecodePaymentFast(banking.SandboxPaymentJSON(docID, time.Now().UTC().Format(time.DateOnly)), &d) {
			t.Fatal("the sandbox payment does not decode")
		}
		d.DigestSignatures = nil
		cms, err := gost.SignDetached([]byte(banking.PaymentDigest(&d)), signerCert, signer)
		if err != nil {
			t.Fatal(err)
		}
		d.DigestSignatures = []banking.DigestSignature{{Base64Encoded: base64.StdEncoding.EncodeToString(cms), CertificateUUID: uuid}}
		return bankRequestJSON(t, "POST", w.url("/v1/payments"), w.tokU1, d)
	}
	if code, m := pay("f0000000-0000-4000-8000-0000000000a1", cert, key); code != 201 || m["bankStatus"] != "IMPLEMENTED" {
		t.Fatalf("payment signed with the issued certificate: %d %v", code, m)
	}
	other, _ := gost.GenerateKey(gost.TC26256A, rand.Reader)
	otherCert, _ := gost.SelfSignedCertificate(other, "Иванов Иван Иванович", time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if code, m := pay("f0000000-0000-4000-8000-0000000000a2", otherCert, other); code != 400 || m["cause"] != "SIGN_CHECK_EXCEPTION" {
		t.Fatalf("payment signed by another key under the issued uuid: %d %v", code, m)
	}
}

// TestCertRequestValidationOverHTTP: field errors in one VALIDATION_FAULT
// naming each field, a request whose signature fails SIGN_CHECK_EXCEPTION,
// and the EIO login decides whose certificate it is.
func TestCertRequestValidationOverHTTP(t *testing.T) {
	w := newCertReqWorld(t)
	key, _ := gost.GenerateKey(gost.TC26256A, rand.Reader)
	der, _ := gost.CreateCertificateRequest(key, "Петров", "A00.P")
	good := base64.StdEncoding.EncodeToString(der)
	req := func(id string, set map[string]any) map[string]any {
		m := map[string]any{"externalId": id, "number": "7", "userName": "Петров", "email": "p@example.com", "userPosition": "Бухгалтер",
			"pkcs10": map[string]any{"bicryptId": "A00.P", "cms": good}}
		for k, v := range set {
			if v == nil {
				delete(m, k)
			} else {
				m[k] = v
			}
		}
		return m
	}
	code, m := bankRequestJSON(t, "POST", w.url("/v1/crypto/cert-requests"), w.tokU1,
		req("not-a-uuid", map[string]any{"email": "no-at-sign", "userPosition": nil, "pkcs10": map[string]any{"bicryptId": "A00.OTHER", "cms": good}}))
	fields, _ := m["fieldNames"].([]any)
	if code != 400 || m["cause"] != "VALIDATION_FAULT" || len(fields) != 4 || len(m["checks"].([]any)) != 4 {
		t.Fatalf("bad fields: %d %v", code, m)
	}
	for _, f := range []string{"externalId", "email", "userPosition", "pkcs10.bicryptId"} {
		if !slices.Contains(fields, any(f)) {
			t.Errorf("fieldNames %v lack %s", fields, f)
		}
	}
	tampered := append([]byte(nil), der...)
	tampered[len(tampered)-2] ^= 0x40
	code, m = bankRequestJSON(t, "POST", w.url("/v1/crypto/cert-requests"), w.tokU1,
		req("f1000000-0000-4000-8000-000000000001", map[string]any{"pkcs10": map[string]any{"bicryptId": "A00.P", "cms": base64.StdEncoding.EncodeToString(tampered)}}))
	if code != 400 || m["cause"] != "SIGN_CHECK_EXCEPTION" {
		t.Fatalf("a request whose signature fails: %d %v", code, m)
	}
	if code, _ := w.state(t, w.tokU1, "f1000000-0000-4000-8000-000000000001"); code != 404 {
		t.Fatalf("the refused request was stored: %d", code)
	}
	if code, m := bankRequestJSON(t, "POST", w.url("/v1/crypto/cert-requests"), w.tokU1, []int{1}); code != 400 || m["cause"] != "DESERIALIZATION_FAULT" {
		t.Fatalf("an array body: %d %v", code, m)
	}

	// EIO: u1 asks for u2's certificate; b1 of the other organisation is
	// not a login u1 may name.
	eio := req("f1000000-0000-4000-8000-000000000002", map[string]any{"login": "b1"})
	if code, m := bankRequestJSON(t, "POST", w.url("/v1/crypto/cert-requests/eio"), w.tokU1, eio); code != 400 || m["cause"] != "WORKFLOW_FAULT" {
		t.Fatalf("EIO for another organisation's login: %d %v", code, m)
	}
	eio["login"] = "u2"
	if code, m := bankRequestJSON(t, "POST", w.url("/v1/crypto/cert-requests/eio"), w.tokU1, eio); code != 201 || m["login"] != "u2" {
		t.Fatalf("EIO create: %d %v", code, m)
	}
	code, act := bankRequestJSON(t, "POST", w.url("/v1/crypto/cert-requests/eio/f1000000-0000-4000-8000-000000000002/activate"), w.tokU1, nil)
	if code != 201 {
		t.Fatalf("EIO activate: %d %v", code, act)
	}
	uuid := certUUIDInComment.FindStringSubmatch(act["bankComment"].(string))[1]
	if mine, _ := w.certInfos(t, w.tokU1); mine[uuid] != nil {
		t.Fatal("the EIO certificate is listed for the sender, not for the login's user")
	}
	if theirs, _ := w.certInfos(t, w.tokU2); theirs[uuid] == nil {
		t.Fatal("the EIO certificate is not listed for the login's user")
	}
}
