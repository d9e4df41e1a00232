package main

import (
	"testing"
	"time"

	"partnerapi/internal/banking"
)

// TestBankingQRSigningMethod confirms by QR in the test contour, where the
// requesting user's signing tool type decides (reference §4.2): a user made
// with --signing-method OneTimePassword, and one switched to it later, get
// their code; a user left at the default (a certificate on a token) gets
// the §7 WORKFLOW_FAULT, whatever ids are sent. The sandbox's magic ids are
// ordinary ids here.
func TestBankingQRSigningMethod(t *testing.T) {
	const contour = banking.ContourTest
	ts := startServer(t, "--only", "banking", "--banking-contour", contour)
	cli := func(args ...string) map[string]any {
		return bankingCLI(t, "", append(args, "--data-dir", ts.dataDir, "--banking-contour", contour)...)
	}
	str := func(m map[string]any, k string) string { return m[k].(string) }
	org := str(cli("org", "create", "--name", "ООО QR", "--inn", banking.SandboxOrgINN, "--kpp", banking.SandboxOrgKPP), "id")
	cli("account", "add", "--org", org, "--number", banking.SandboxAccount, "--bic", banking.SandboxBIC, "--corr", banking.SandboxCorrAccount)
	otp := str(cli("user", "create", "--org", org, "--login", "otp", "--signing-method", banking.SigningOneTimePassword), "id")
	token := str(cli("user", "create", "--org", org, "--login", "token"), "id")
	later := str(cli("user", "create", "--org", org, "--login", "later"), "id")
	client := str(cli("app", "create", "--name", "Partner", "--redirect-uri", "https://p/cb"), "client_id")
	tok := func(user string) string {
		return str(cli("token", "--scope", "PAY_DOC_RU", "--org", org, "--user", user, "--client", client), "access_token")
	}
	tokOTP, tokToken := tok(otp), tok(token)
	base := ts.urls["banking"] + "/fintech/api/v1/payments"

	draft := banking.NewUUID()
	var d banking.Payment
	if !banking.DecodePaymentFast(banking.SandboxPaymentJSON(draft, time.Now().UTC().Format(time.DateOnly)), &d) {
		t.Fatal("the sandbox payment does not decode")
	}
	d.DigestSignatures = nil
	if st, m := bankRequestJSON(t, "POST", base, "Bearer "+tokOTP, d); st != 201 || m["bankStatus"] != "CREATED" {
		t.Fatalf("draft: %d %v", st, m)
	}
	qr := func(tok string, ids ...string) (int, map[string]any) {
		return bankRequestJSON(t, "POST", base+"/qr-confirmation", "Bearer "+tok, map[string]any{"externalDocIds": ids})
	}
	if st, m := qr(tokOTP, draft); st != 201 || m["qrCode"] == nil {
		t.Fatalf("OneTimePassword user: %d %v", st, m)
	}
	for _, ids := range [][]string{{draft}, {banking.QRSandboxOK}} {
		st, m := qr(tokToken, ids...)
		if st != 400 || m["cause"] != "WORKFLOW_FAULT" || m["message"] != "Подтверждение по QR-коду доступно только пользователям с типом средства подписи OneTimePassword" {
			t.Fatalf("Token user %v: %d %v", ids, st, m)
		}
	}
	// The sandbox's success id names no document here.
	if st, m := qr(tokOTP, banking.QRSandboxOK); st != 404 || m["cause"] != "DATA_NOT_FOUND_EXCEPTION" {
		t.Fatalf("magic id outside the sandbox: %d %v", st, m)
	}
	// A user switched to OneTimePassword may confirm from then on.
	if out := cli("user", "signing-method", "--user", later, "--signing-method", banking.SigningOneTimePassword); out["signingMethod"] != banking.SigningOneTimePassword {
		t.Fatalf("signing-method: %v", out)
	}
	if st, m := qr(tok(later), draft); st != 201 {
		t.Fatalf("switched user: %d %v", st, m)
	}
}
