package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/gost"
)

// certCLI runs `partnerapi banking args...` against w's data and contour
// and decodes its JSON output (an object or a list) into out.
func certCLI(w *foreignWorld, contour string, out any, args ...string) error {
	var buf bytes.Buffer
	args = append(args, "--data-dir", w.ts.dataDir, "--banking-contour", contour)
	if err := runBanking(context.Background(), args, func(string) string { return "" },
		stdio{in: strings.NewReader(""), out: &buf, err: io.Discard}); err != nil {
		return err
	}
	return json.Unmarshal(buf.Bytes(), out)
}

// cryptoActive is what GET /v1/crypto says of certificate uuid's active
// flag for tok's user; it fails the test when the certificate is absent.
func cryptoActive(t *testing.T, w *foreignWorld, tok, uuid string) bool {
	t.Helper()
	code, m := bankRequestJSON(t, "GET", w.ts.urls["banking"]+"/fintech/api/v1/crypto", "Bearer "+tok, nil)
	if code != 200 {
		t.Fatalf("crypto: %d %v", code, m)
	}
	for _, p := range m["cryptoProfileInfos"].([]any) {
		for _, c := range p.(map[string]any)["certificateInfos"].([]any) {
			if c := c.(map[string]any); strings.EqualFold(c["uuid"].(string), uuid) {
				return c["active"].(bool)
			}
		}
	}
	t.Fatalf("crypto has no certificate %s: %v", uuid, m)
	return false
}

// TestBankingCertDeactivate: `banking cert deactivate` stops the bank taking
// signatures made with a certificate, and `cert activate` restores them,
// in every contour. While it is inactive /v1/crypto says active:false and a
// payment signed with it is refused — SIGN_CHECK_EXCEPTION where signatures
// are verified (§13 "certificate not found or inactive"), WORKFLOW_FAULT in
// the sandbox, which answers so for every certificate it does not take
// (§7) — while the document signed before keeps its status. `cert list`
// shows the flag.
func TestBankingCertDeactivate(t *testing.T) {
	for _, contour := range []string{banking.ContourSandbox, banking.ContourTest, banking.ContourProduction} {
		t.Run(contour, func(t *testing.T) {
			w := newForeignWorld(t, contour)
			var tok struct {
				AccessToken string `json:"access_token"`
			}
			if err := certCLI(w, contour, &tok, "token", "--scope", "GET_CRYPTO_INFO", "--org", w.orgA, "--user", w.userA1, "--client", w.client); err != nil {
				t.Fatal(err)
			}
			uuid, refused := w.a1.uuid, "SIGN_CHECK_EXCEPTION"
			sign := func(digest string) map[string]any { return w.a1.sign(t, w.a1.uuid, digest) }
			if contour == banking.ContourSandbox {
				uuid, refused = banking.SandboxCertSole, "WORKFLOW_FAULT"
				sign = func(string) map[string]any {
					return map[string]any{"base64Encoded": "MIIB", "certificateUuid": banking.SandboxCertSole}
				}
			}
			create := func() (string, int, map[string]any) {
				id := banking.NewUUID()
				d, digest := w.doc(t, id, w.accA)
				body := map[string]any{}
				raw, _ := banking.MarshalPayment(&d)
				_ = json.Unmarshal(raw, &body)
				body["digestSignatures"] = []any{sign(digest)}
				code, m := w.call(t, w.tokA1, "POST", "", body)
				return id, code, m
			}
			before, code, m := create()
			if code != 201 || m["bankStatus"] != "IMPLEMENTED" {
				t.Fatalf("signed while active: %d %v", code, m)
			}

			var entry certListEntry
			if err := certCLI(w, contour, &entry, "cert", "deactivate", "--uuid", strings.ToUpper(uuid)); err != nil {
				t.Fatal(err)
			}
			if entry.Active || entry.UUID != uuid || entry.NotAfter == "" {
				t.Fatalf("deactivate printed %+v", entry)
			}
			var list []certListEntry
			if err := certCLI(w, contour, &list, "cert", "list", "--org", w.orgA); err != nil {
				t.Fatal(err)
			}
			seen := 0
			for _, e := range list {
				if e.Org != w.orgA {
					t.Errorf("listed %+v of another organisation", e)
				}
				if e.UUID == uuid {
					seen++
					if e.Active {
						t.Errorf("listed %+v as active", e)
					}
				} else if !e.Active {
					t.Errorf("listed %+v inactive, only %s was deactivated", e, uuid)
				}
			}
			if seen != 1 || len(list) < 3 {
				t.Fatalf("list %+v", list)
			}
			if cryptoActive(t, w, tok.AccessToken, uuid) {
				t.Fatal("crypto says active after deactivation")
			}
			// The server reads certificates through a read cache that a
			// change made by another process reaches within a second.
			time.Sleep(1100 * time.Millisecond)
			if _, code, m := create(); code != 400 || m["cause"] != refused {
				t.Fatalf("signed while inactive: %d %v, want 400 %s", code, m, refused)
			}
			if code, m := w.call(t, w.tokA1, "GET", "/"+before+"/state", nil); code != 200 || m["bankStatus"] != "IMPLEMENTED" {
				t.Fatalf("the document signed before: %d %v", code, m)
			}

			if err := certCLI(w, contour, &entry, "cert", "activate", "--uuid", uuid); err != nil || !entry.Active {
				t.Fatalf("activate: %+v %v", entry, err)
			}
			if !cryptoActive(t, w, tok.AccessToken, uuid) {
				t.Fatal("crypto says inactive after activation")
			}
			time.Sleep(1100 * time.Millisecond)
			if _, code, m := create(); code != 201 || m["bankStatus"] != "IMPLEMENTED" {
				t.Fatalf("signed after activation: %d %v", code, m)
			}
		})
	}
}

// TestBankingCertCLIErrors: the certificate commands name what is wrong.
func TestBankingCertCLIErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"cert", "deactivate"}, "--uuid is required"},
		{[]string{"cert", "activate", "--uuid", "00000000-0000-4000-8000-000000000000"}, "no such certificate"},
		{[]string{"cert", "list"}, "exactly one of --user and --org"},
		{[]string{"cert", "list", "--user", "u", "--org", "o"}, "exactly one of --user and --org"},
		{[]string{"cert", "list", "--user", "nobody"}, "--user nobody: no such user"},
		{[]string{"cert", "list", "--org", "nowhere"}, "--org nowhere: no such organisation"},
	} {
		err := runBanking(context.Background(), append(tc.args, "--data-dir", dir), func(string) string { return "" },
			stdio{in: strings.NewReader(""), out: io.Discard, err: io.Discard})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
	var list []certListEntry
	var buf bytes.Buffer
	if err := runBanking(context.Background(), []string{"cert", "list", "--user", banking.SandboxUserID, "--data-dir", dir}, func(string) string { return "" },
		stdio{in: strings.NewReader(""), out: &buf, err: io.Discard}); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(buf.Bytes(), &list); err != nil || len(list) != 4 {
		t.Fatalf("the sandbox user's certificates: %s %v", buf.String(), err)
	}
	for _, e := range list {
		if !e.Active || e.Role == "" || e.Type == "" || e.Issuer == "" || e.Serial == "" || e.NotBefore == "" || e.NotAfter == "" {
			t.Errorf("entry %+v", e)
		}
	}
}

// TestBankingCertValidityPeriod: a certificate registered outside its
// validity period (expired, or not yet valid) is reported active:false by
// /v1/crypto and activeNow:false by `cert list` although nobody deactivated
// it, and a payment signed with it is refused with SIGN_CHECK_EXCEPTION.
func TestBankingCertValidityPeriod(t *testing.T) {
	const contour = banking.ContourTest
	w := newForeignWorld(t, contour)
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := certCLI(w, contour, &tok, "token", "--scope", "GET_CRYPTO_INFO", "--org", w.orgA, "--user", w.userA1, "--client", w.client); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, tc := range []struct {
		name                string
		notBefore, notAfter time.Time
	}{
		{"expired", now.Add(-48 * time.Hour), now.Add(-24 * time.Hour)},
		{"not yet valid", now.Add(24 * time.Hour), now.Add(48 * time.Hour)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key, err := gost.GenerateKey(gost.TC26256A, rand.Reader)
			if err != nil {
				t.Fatal(err)
			}
			cert, err := gost.SelfSignedCertificate(key, tc.name, tc.notBefore, tc.notAfter)
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(t.TempDir(), "cert.pem")
			if err := os.WriteFile(file, cert.PEM(), 0o600); err != nil {
				t.Fatal(err)
			}
			var added map[string]string
			if err := certCLI(w, contour, &added, "cert", "add", "--user", w.userA1, "--cert", file); err != nil {
				t.Fatal(err)
			}
			s := foreignSigner{uuid: added["uuid"], cert: cert, key: key}
			var list []certListEntry
			if err := certCLI(w, contour, &list, "cert", "list", "--user", w.userA1); err != nil {
				t.Fatal(err)
			}
			for _, e := range list {
				if e.UUID == s.uuid && (!e.Active || e.ActiveNow || e.NotAfter != tc.notAfter.UTC().Truncate(time.Second).Format(time.RFC3339)) {
					t.Errorf("listed %+v", e)
				}
				if e.UUID == w.a1.uuid && (!e.Active || !e.ActiveNow) {
					t.Errorf("the valid certificate listed %+v", e)
				}
			}
			if cryptoActive(t, w, tok.AccessToken, s.uuid) {
				t.Error("crypto says active")
			}
			if !cryptoActive(t, w, tok.AccessToken, w.a1.uuid) {
				t.Error("crypto says the valid certificate is inactive")
			}
			d, digest := w.doc(t, banking.NewUUID(), w.accA)
			body := map[string]any{}
			raw, _ := banking.MarshalPayment(&d)
			_ = json.Unmarshal(raw, &body)
			body["digestSignatures"] = []any{s.sign(t, s.uuid, digest)}
			if code, m := w.call(t, w.tokA1, "POST", "", body); code != 400 || m["cause"] != "SIGN_CHECK_EXCEPTION" {
				t.Fatalf("signed with it: %d %v", code, m)
			}
		})
	}
}
