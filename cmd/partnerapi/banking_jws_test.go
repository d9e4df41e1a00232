package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/banking/bankkeys"
	"partnerapi/internal/gost"
)

// bankCall sends one banking request and returns status, Content-Type and
// body.
func bankCall(t *testing.T, method, url, token, accept, body string) (int, string, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), out
}

// openBankJWS checks that an answer is a compact JWS by the bank's
// certificate and returns its payload.
func openBankJWS(t *testing.T, body []byte, cert *gost.Certificate) *gost.JWS {
	t.Helper()
	j, err := gost.ParseJWS(string(body))
	if err != nil {
		t.Fatalf("not a JWS: %v: %s", err, body)
	}
	if j.Header.Alg != gost.JWSAlgorithm || j.Header.Kid != banking.BankCertificateID(cert) {
		t.Fatalf("JWS header %+v, want kid %s", j.Header, banking.BankCertificateID(cert))
	}
	if err := j.Verify(cert); err != nil {
		t.Fatalf("JWS does not verify with the bank's certificate: %v", err)
	}
	return j
}

// sameAnswer compares two JSON answers of the same request, but for the
// fields that differ per request by design: an error's referenceId, and a
// new document's externalId, the crucialFieldsHash that covers it and the
// number the bank assigned it (each create sent without one takes the next).
func sameAnswer(t *testing.T, a, b []byte) {
	t.Helper()
	var ma, mb map[string]any
	if err := json.Unmarshal(a, &ma); err != nil {
		t.Fatalf("%v: %s", err, a)
	}
	if err := json.Unmarshal(b, &mb); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	for _, perRequest := range []string{"referenceId", "externalId", "crucialFieldsHash", "number"} {
		delete(ma, perRequest)
		delete(mb, perRequest)
	}
	if !reflect.DeepEqual(ma, mb) {
		t.Fatalf("JWS payload and JSON answer differ:\n%s\n%s", a, b)
	}
}

// jwsPaymentDoc is a sandbox payment, signed by the sole signer.
func jwsPaymentDoc(id, payerInn string) string {
	return `{"externalId":"` + id + `","date":"` + time.Now().UTC().Format(time.DateOnly) + `","amount":10.01,"operationCode":"01","priority":"5",` +
		`"purpose":"Оплата, без НДС","payerName":"ООО Песочница","payerInn":"` + payerInn + `","payerAccount":"` + banking.SandboxAccount +
		`","payerBankBic":"` + banking.SandboxBIC + `","payerBankCorrAccount":"` + banking.SandboxCorrAccount +
		`","payeeName":"АО Лютик","payeeInn":"7830002293","payeeAccount":"40602810700000000025","payeeBankBic":"049805746","payeeBankCorrAccount":"30101810800000000746",` +
		`"digestSignatures":[{"base64Encoded":"MIIB","certificateUuid":"` + banking.SandboxCertSole + `"}]}`
}

// Every JSON answer under /fintech/api, success or error (the platform's
// 413 included), comes back as a JWS of exactly the JSON it would have been
// when the client accepts application/jose, and as JSON otherwise.
func TestBankingJWSAnswers(t *testing.T) {
	ts := startServer(t, "--only", "banking")
	cert := bankingJWSCertificate(t, "--data-dir", ts.dataDir)
	tok := bankingToken(t, ts, "PAY_DOC_RU")
	base := ts.urls["banking"] + "/fintech/api/v1/payments"
	const stateID = "c0000000-0000-4000-8000-000000000001"
	if st, _, body := bankCall(t, "POST", base, tok, "", jwsPaymentDoc(stateID, banking.SandboxOrgINN)); st != 201 {
		t.Fatalf("seed payment: %d %s", st, body)
	}
	n := 0
	newID := func() string { n++; return fmt.Sprintf("c0000000-0000-4000-8000-%012d", 100+n) }
	for _, tc := range []struct {
		name, method, path string
		body               func() string // nil: no body
		status             int
		cause              string
	}{
		{"payment create", "POST", "", func() string { return jwsPaymentDoc(newID(), banking.SandboxOrgINN) }, 201, ""},
		{"state", "GET", "/" + stateID + "/state", nil, 200, ""},
		{"payment", "GET", "/" + stateID, nil, 200, ""},
		{"unknown payment", "GET", "/c0000000-0000-4000-8000-999999999999/state", nil, 404, "DATA_NOT_FOUND_EXCEPTION"},
		{"invalid payment", "POST", "", func() string { return jwsPaymentDoc(newID(), "12ab") }, 400, "VALIDATION_FAULT"},
		{"unknown route", "GET", "/" + stateID + "/nothing-here", nil, 404, "NOT_FOUND"},
		// The platform's own answer, written before the router runs.
		{"body over the limit", "POST", "", func() string { return `{"purpose":"` + strings.Repeat("x", 1<<20) + `"}` }, 413, "VALIDATION_FAULT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := func() string {
				if tc.body == nil {
					return ""
				}
				return tc.body()
			}
			st, ct, plain := bankCall(t, tc.method, base+tc.path, tok, "", body())
			if st != tc.status || ct != "application/json" {
				t.Fatalf("JSON answer %d %s: %s", st, ct, plain)
			}
			if tc.cause != "" && !bytes.Contains(plain, []byte(`"cause":"`+tc.cause+`"`)) {
				t.Fatalf("JSON answer without cause %s: %s", tc.cause, plain)
			}
			for _, accept := range []string{"application/jose", "application/json;q=0.5, application/jose"} {
				st, ct, signed := bankCall(t, tc.method, base+tc.path, tok, accept, body())
				if st != tc.status || ct != "application/jose" {
					t.Fatalf("Accept %s: %d %s: %s", accept, st, ct, signed)
				}
				sameAnswer(t, openBankJWS(t, signed, cert).Payload, plain)
			}
			for _, accept := range []string{"application/json", "application/json, application/jose;q=0.1", "*/*"} {
				st, ct, again := bankCall(t, tc.method, base+tc.path, tok, accept, body())
				if st != tc.status || ct != "application/json" || !json.Valid(again) {
					t.Fatalf("Accept %s: %d %s: %s", accept, st, ct, again)
				}
			}
		})
	}
	// Answers that are not JSON keep their form: the digest is the text
	// to sign, and OAuth endpoints have formats of their own.
	if st, ct, body := bankCall(t, "GET", base+"/"+stateID+"/digest", tok, "application/jose", ""); st != 200 || !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("digest: %d %s %s", st, ct, body)
	}
	if st, ct, body := bankCall(t, "POST", ts.urls["banking"]+"/ic/sso/api/v2/oauth/token", "", "application/jose", ""); st < 400 || strings.HasPrefix(ct, "application/jose") {
		t.Fatalf("OAuth token error: %d %s %s", st, ct, body)
	}
}

// The key outlives a restart on one data directory, and --banking-jws-key
// makes servers on different data directories sign with one key.
func TestBankingJWSKeyAcrossServers(t *testing.T) {
	signedState := func(t *testing.T, ts *testServer, dataDir string) []byte {
		t.Helper()
		var out bytes.Buffer
		if err := runBanking(context.Background(), []string{"token", "--scope", "PAY_DOC_RU", "--data-dir", dataDir},
			func(string) string { return "" }, stdio{in: strings.NewReader(""), out: &out, err: io.Discard}); err != nil {
			t.Fatal(err)
		}
		var tok struct {
			AccessToken string `json:"access_token"`
		}
		_ = json.Unmarshal(out.Bytes(), &tok)
		st, ct, body := bankCall(t, "GET", ts.urls["banking"]+"/fintech/api/v1/payments/c0000000-0000-4000-8000-999999999999/state",
			tok.AccessToken, "application/jose", "")
		if st != 404 || ct != "application/jose" {
			t.Fatalf("%d %s %s", st, ct, body)
		}
		return body
	}
	t.Run("restart", func(t *testing.T) {
		dir := t.TempDir()
		var certs [2]*gost.Certificate
		for i := range certs {
			// Each subtest's server stops when the subtest ends.
			t.Run(fmt.Sprintf("start %d", i+1), func(t *testing.T) {
				ts := startServer(t, "--only", "banking", "--data-dir", dir)
				certs[i] = bankingJWSCertificate(t, "--data-dir", dir)
				openBankJWS(t, signedState(t, ts, dir), certs[i])
				if i == 1 && !bytes.Equal(certs[0].Raw, certs[1].Raw) {
					t.Fatal("the restarted server has another certificate")
				}
				key, err := bankkeys.LoadBankKey(filepath.Join(dir, bankkeys.BankKeyFile))
				if err != nil {
					t.Fatal(err)
				}
				if logs := ts.logs.String(); strings.Contains(logs, "PRIVATE KEY") || strings.Contains(logs, key.Key.D.Text(16)) {
					t.Fatal("the private key reached the log")
				}
			})
		}
	})
	t.Run("--banking-jws-key", func(t *testing.T) {
		keyFile, key := writeBankKeyPEM(t)
		for i := range 2 {
			dir := t.TempDir()
			ts := startServer(t, "--only", "banking", "--data-dir", dir, "--banking-jws-key", keyFile)
			openBankJWS(t, signedState(t, ts, dir), key.Cert)
			if _, err := os.Stat(filepath.Join(dir, bankkeys.BankKeyFile)); !os.IsNotExist(err) {
				t.Fatalf("server %d made a key file despite --banking-jws-key: %v", i+1, err)
			}
		}
	})
}

// OpenSSL's GOST engine, an independent implementation, verifies a JWS
// answer with the public key of the certificate the CLI prints
// (banking.md §9.5): the signature is over the ASCII signing input in the
// 64-byte s‖r form `openssl dgst` reads.
func TestBankingJWSOpenSSL(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skipf("SKIPPING OPENSSL ORACLE TEST: openssl not found (%v)", err)
	}
	if out, err := exec.Command("openssl", "engine", "gost").CombinedOutput(); err != nil {
		t.Skipf("SKIPPING OPENSSL ORACLE TEST: the OpenSSL GOST engine is not available (%v: %s); "+
			"install it with: apt-get install -y libengine-gost-openssl openssl", err, out)
	}
	ts := startServer(t, "--only", "banking")
	cert := bankingJWSCertificate(t, "--data-dir", ts.dataDir)
	tok := bankingToken(t, ts, "PAY_DOC_RU")
	st, _, body := bankCall(t, "GET", ts.urls["banking"]+"/fintech/api/v1/payments/c0000000-0000-4000-8000-999999999999/state", tok, "application/jose", "")
	if st != 404 {
		t.Fatalf("%d %s", st, body)
	}
	j := openBankJWS(t, body, cert)
	dir := t.TempDir()
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("c.pem", cert.PEM())
	write("input", []byte(j.SigningInput))
	write("sig", j.Signature)
	run := func(args ...string) error {
		cmd := exec.Command("openssl", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("openssl %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if err := run("x509", "-engine", "gost", "-in", "c.pem", "-pubkey", "-noout", "-out", "pub.pem"); err != nil {
		t.Fatal(err)
	}
	verify := []string{"dgst", "-engine", "gost", "-md_gost12_256", "-verify", "pub.pem", "-signature", "sig", "input"}
	if err := run(verify...); err != nil {
		t.Fatal(err)
	}
	// Negative control: a changed signing input must not verify.
	write("input", append([]byte(j.SigningInput), 'x'))
	if run(verify...) == nil {
		t.Fatal("openssl verified the JWS signature over changed input")
	}
}
