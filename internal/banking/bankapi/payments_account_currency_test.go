package bankapi

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"partnerapi/internal/banking"
)

// recordAccounts is payAccounts whose records carry a state and a currency
// of the test's choosing.
type recordAccounts struct {
	payAccounts
	states, currencies map[string]string
}

func (a recordAccounts) AccountHolder(ctx context.Context, acc string) (banking.AccountHolder, bool, error) {
	h, ok, err := a.payAccounts.AccountHolder(ctx, acc)
	h.State, h.Currency = a.states[acc], a.currencies[acc]
	return h, ok, err
}

// keyedAccount is number with its control key set for bic.
func keyedAccount(t *testing.T, bic, number string) string {
	t.Helper()
	acc, ok := banking.WithControlKey(number, bic)
	if !ok {
		t.Fatalf("no control key makes %s valid at %s", number, bic)
	}
	return acc
}

// A payment order in roubles leaves and reaches rouble accounts alone: an
// account the bank keeps in dollars is refused as the payer (WORKFLOW_FAULT,
// whatever its digits say), an account number whose digits 6–8 name another
// currency fails its check (CHECKERROR by default, naming the field), and a
// draft from the requester's own invoice cannot pay a closed or non-rouble
// account of its own, while a blocked one still receives.
func TestPaymentsRoubleAccountsAndPayeeState(t *testing.T) {
	dollarAcc := keyedAccount(t, banking.SandboxBIC, "40702840000000000131")
	// An account whose record names no currency: its number's digits alone
	// say dollars.
	dollarDigits := keyedAccount(t, banking.SandboxBIC, "40702840000000000134")
	closedAcc := keyedAccount(t, banking.SandboxBIC, "40702810000000000132")
	blockedAcc := keyedAccount(t, banking.SandboxBIC, "40702810000000000133")
	// A third party's dollar account at another bank, key right.
	foreignPayee := keyedAccount(t, "044525593", "40702840000000000777")
	signed := map[string]any{"digestSignatures": sigs(banking.SandboxCertSole)}
	invoice := func(n int, payee string) string {
		b, _ := json.Marshal(map[string]any{"externalId": newUUID(n), "amount": json.Number("99.9"), "date": "2026-11-22",
			"purpose": "Счёт 7", "payeeAccount": payee, "priority": "5"})
		return string(b)
	}
	for _, tc := range []struct {
		name, path, token, body string
		status                  int
		bank                    string // bankStatus of a 201
		cause                   string // cause of a 400
		says                    []string
	}{
		{"payer account kept in dollars", "", "pay", payDoc(newUUID(1400), signed), 400, "", "WORKFLOW_FAULT", []string{"payerAccount", "840"}},
		{"payer account number in dollars", "", "pay", payDoc(newUUID(1401), merge(signed, map[string]any{"payerAccount": dollarDigits})),
			201, "CHECKERROR", "", []string{"payerAccount", "840"}},
		{"payee account number in dollars", "", "pay", payDoc(newUUID(1402), merge(signed, map[string]any{"payeeAccount": foreignPayee})),
			201, "CHECKERROR", "", []string{"payeeAccount", "840"}},
		{"own invoice to a closed account", "/from-invoice", "inv", invoice(1403, closedAcc), 400, "", "WORKFLOW_FAULT", []string{"payeeAccount", "CLOSED"}},
		{"own invoice to a blocked account", "/from-invoice", "inv", invoice(1404, blockedAcc), 201, "CREATED", "", nil},
		{"own invoice to a dollar account", "/from-invoice", "inv", invoice(1405, dollarAcc), 400, "", "WORKFLOW_FAULT", []string{"payeeAccount", "840"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newPayEnv(t)
			accs := recordAccounts{payAccounts: payAccounts{banking.SandboxAccount: payOrg, otherOrgAcc: payOrg2,
				dollarAcc: payOrg, dollarDigits: payOrg, closedAcc: payOrg, blockedAcc: payOrg},
				states:     map[string]string{closedAcc: banking.AccountClosed, blockedAcc: banking.AccountBlocked},
				currencies: map[string]string{dollarAcc: "840"}}
			if tc.name == "payer account kept in dollars" {
				accs.currencies[banking.SandboxAccount] = "840"
			}
			e.svc.Accounts = accs
			st, m, raw := e.do("POST", paymentsBase+tc.path, tc.token, tc.body)
			if st != tc.status || tc.bank != "" && m["bankStatus"] != tc.bank || tc.cause != "" && m["cause"] != tc.cause {
				t.Fatalf("got %d %s", st, raw)
			}
			for _, s := range tc.says {
				if !strings.Contains(raw, s) {
					t.Errorf("%s does not say %q", raw, s)
				}
			}
		})
	}
}
