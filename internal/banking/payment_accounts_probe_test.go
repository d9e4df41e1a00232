package banking

import (
	"context"
	"strings"
	"testing"
)

// An account the bank does not know and another organisation's account
// are refused with one answer, payer and payee alike, so a tenant cannot
// probe which account numbers exist at the bank.
func TestForeignAndUnknownAccountsLookAlike(t *testing.T) {
	const unknown = "40702810200000012345"
	ctx := context.Background()
	answer := func(t *testing.T, account string, create func(*PaymentService, Principal, string) error) string {
		t.Helper()
		svc, p := newTestPayments(t)
		err := create(svc, p, account)
		if KindOf(err) != KindWorkflow {
			t.Fatalf("account %s: %v, want a workflow fault", account, err)
		}
		return strings.ReplaceAll(err.Error(), account, "N")
	}
	for _, c := range []struct {
		name   string
		create func(*PaymentService, Principal, string) error
	}{
		{"payer account", func(svc *PaymentService, p Principal, account string) error {
			d := payOrder("6e000000-0000-4000-8000-000000000001", "2026-11-22")
			d.PayerAccount = account
			_, err := svc.Create(ctx, p, d)
			return err
		}},
		{"invoice payee account", func(svc *PaymentService, p Principal, account string) error {
			d := Payment{ExternalID: "6e000000-0000-4000-8000-000000000002", Amount: "99.90", Date: "2026-11-22", Priority: "5",
				PayeeAccount: account}
			_, err := svc.CreateInvoice(ctx, p, KindInvoice, d)
			return err
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			foreign, missing := answer(t, SandboxAccount2, c.create), answer(t, unknown, c.create)
			if foreign != missing {
				t.Fatalf("another organisation's account: %q\nan unknown account: %q", foreign, missing)
			}
		})
	}
}
