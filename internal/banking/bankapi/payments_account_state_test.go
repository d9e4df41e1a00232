package bankapi

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"partnerapi/internal/banking"
)

// stateAccounts is payAccounts with account states the test may change
// between requests.
type stateAccounts struct {
	payAccounts
	mu     sync.Mutex
	states map[string]string
}

func (a *stateAccounts) AccountHolder(ctx context.Context, acc string) (banking.AccountHolder, bool, error) {
	h, ok, err := a.payAccounts.AccountHolder(ctx, acc)
	a.mu.Lock()
	h.State = a.states[acc]
	a.mu.Unlock()
	return h, ok, err
}

func (a *stateAccounts) set(acc, state string) {
	a.mu.Lock()
	a.states[acc] = state
	a.mu.Unlock()
}

// A payment from a blocked or closed payer account gets 400 WORKFLOW_FAULT
// naming payerAccount and its state, at create and at /sign or QR
// confirmation of a draft made while the account was open.
func TestPaymentsPayerAccountState(t *testing.T) {
	signBody, _ := json.Marshal(map[string]any{"digestSignatures": sigs(banking.SandboxCertSole)})
	for i, tc := range []struct {
		name   string
		atMake string
		atSign string // "" signed at create
		status int
		state  string // named by the refusal
	}{
		{"open", banking.AccountOpen, "", 201, ""},
		{"blocked", banking.AccountBlocked, "", 400, "BLOCKED"},
		{"closed", banking.AccountClosed, "", 400, "CLOSED"},
		{"draft signed while open", banking.AccountOpen, banking.AccountOpen, 200, ""},
		{"draft signed after closing", banking.AccountOpen, banking.AccountClosed, 400, "CLOSED"},
		{"draft signed after blocking", banking.AccountOpen, banking.AccountBlocked, 400, "BLOCKED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newPayEnv(t)
			accs := &stateAccounts{payAccounts: e.svc.Accounts.(payAccounts), states: map[string]string{}}
			e.svc.Accounts = accs
			accs.set(banking.SandboxAccount, tc.atMake)
			id := newUUID(1300 + i)
			over := map[string]any{"digestSignatures": sigs(banking.SandboxCertSole)}
			if tc.atSign != "" {
				over = nil
			}
			st, m, raw := e.do("POST", paymentsBase, "pay", payDoc(id, over))
			if tc.atSign != "" {
				if st != 201 {
					t.Fatalf("draft: %d %s", st, raw)
				}
				accs.set(banking.SandboxAccount, tc.atSign)
				qst, _, qraw := e.do("POST", paymentsBase+"/qr-confirmation", "pay", `{"externalDocIds":["`+id+`"]}`)
				if (qst == 400) != (tc.status == 400) || qst == 400 && !strings.Contains(qraw, tc.state) {
					t.Fatalf("QR: %d %s", qst, qraw)
				}
				st, m, raw = e.do("POST", paymentsBase+"/"+id+"/sign", "pay", string(signBody))
			}
			if st != tc.status {
				t.Fatalf("%d %s, want %d", st, raw, tc.status)
			}
			if st != 400 {
				if m["bankStatus"] != "IMPLEMENTED" {
					t.Fatalf("%s, want IMPLEMENTED", raw)
				}
				return
			}
			msg, _ := m["message"].(string)
			if m["cause"] != "WORKFLOW_FAULT" || !strings.Contains(msg, "payerAccount") || !strings.Contains(msg, tc.state) {
				t.Fatalf("refusal %s", raw)
			}
			if tc.atSign != "" {
				if g := e.get(id); g["bankStatus"] != "CREATED" {
					t.Fatalf("refused draft is %v", g["bankStatus"])
				}
			}
		})
	}
}
