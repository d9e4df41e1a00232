package banking

import (
	"context"
	"strings"
	"testing"
)

// A payment from a blocked or closed payer account is refused with
// WORKFLOW_FAULT naming payerAccount and the state (reference §10 states,
// §13), when it is created and when a stored draft is signed or confirmed
// by QR code after the account changed state.
func TestPayerAccountState(t *testing.T) {
	sole := []DigestSignature{{Base64Encoded: "MIIB", CertificateUUID: SandboxCertSole}}
	for i, tc := range []struct {
		name    string
		atMake  string // the account's state when the document is made
		atSign  string // its state when the draft is signed ("" no draft: signed at create)
		refused string // the state a refusal names; "" executed
	}{
		{"open, signed at create", AccountOpen, "", ""},
		{"no recorded state, signed at create", "", "", ""},
		{"blocked, signed at create", AccountBlocked, "", AccountBlocked},
		{"closed, signed at create", AccountClosed, "", AccountClosed},
		{"draft signed while open", AccountOpen, AccountOpen, ""},
		{"draft signed after the account closed", AccountOpen, AccountClosed, AccountClosed},
		{"draft signed after the account was blocked", AccountOpen, AccountBlocked, AccountBlocked},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc, p := newTestPayments(t)
			ids := svc.Accounts.(IdentityAccounts).Store.(*memIdentity)
			setState := func(st string) {
				a := ids.accounts[SandboxAccount]
				a.Status = st
				ids.accounts[SandboxAccount] = a
			}
			setState(tc.atMake)
			id := "6f100000-0000-4000-8000-0000000000" + itoa(10+i)
			d := payOrder(id, "2026-11-22")
			if tc.atSign == "" {
				d.DigestSignatures = sole
			}
			got, err := svc.Create(context.Background(), p, d)
			var qrErr error
			if tc.atSign != "" && err == nil {
				setState(tc.atSign)
				_, qrErr = svc.QRConfirm(context.Background(), p, []string{id})
				got, err = svc.Sign(context.Background(), p, id, sole, "")
			}
			if tc.refused == "" {
				if err != nil || qrErr != nil || got.BankStatus != StatusImplemented {
					t.Fatalf("got %v %v (QR %v), want IMPLEMENTED", got, err, qrErr)
				}
				return
			}
			for op, err := range map[string]error{"sign": err, "QR": qrErr} {
				if op == "QR" && tc.atSign == "" {
					continue
				}
				if KindOf(err) != KindWorkflow || !strings.Contains(err.Error(), "(payerAccount)") || !strings.Contains(err.Error(), tc.refused) {
					t.Fatalf("%s: got %v, want a workflow fault naming payerAccount and %s", op, err, tc.refused)
				}
			}
			if tc.atSign != "" {
				if sp, _ := svc.Store.GetPayment(context.Background(), p.OrgID, id); sp.Status != StatusCreated {
					t.Fatalf("refused draft moved to %s", sp.Status)
				}
			}
		})
	}
}
