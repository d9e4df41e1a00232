package main

import (
	"strings"
	"testing"

	"partnerapi/internal/banking"
)

// TestBankingCardAddAccount: `banking card add` puts a card on an account
// of the organisation it names, and the card answers that account's bank.
// Before, any text was taken as the account (a typo made a card that no
// offer could ever list), another organisation's account gave this one a
// card on it, and bankBic was the sandbox bank's whatever the account's
// BIC was. A --bic that contradicts the account's is refused.
func TestBankingCardAddAccount(t *testing.T) {
	dir := t.TempDir()
	org, err := bankingCLIJSON(t, "org", "create", "--name", "ООО Ромашка", "--inn", "7727406020", "--data-dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	orgID := org["id"].(string)
	const own, ownBIC = "40602810700000000025", "049805746"
	if _, err := bankingCLIJSON(t, "account", "add", "--org", orgID, "--number", own, "--bic", ownBIC,
		"--corr", "30101810800000000746", "--data-dir", dir); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		args    []string
		wantErr string
		wantBIC string
	}{
		{"own account, its BIC", []string{"--org", orgID, "--account", own}, "", ownBIC},
		{"own account, its BIC given", []string{"--org", orgID, "--account", own, "--bic", ownBIC}, "", ownBIC},
		{"own account, another BIC", []string{"--org", orgID, "--account", own, "--bic", banking.SandboxBIC}, "--bic", ""},
		{"no such account", []string{"--org", orgID, "--account", "12345"}, "no such account", ""},
		{"another organisation's account", []string{"--org", orgID, "--account", banking.SandboxAccount}, "not an account of organisation", ""},
		{"the sandbox's own account", []string{"--account", banking.SandboxAccount}, "", banking.SandboxBIC},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"card", "add", "--pan", "2202201234567890", "--holder", "PETR IVANOV", "--data-dir", dir}, c.args...)
			card, err := bankingCLIJSON(t, args...)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("%v: %v, want an error saying %q", c.args, err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if card["bankBic"] != c.wantBIC {
				t.Fatalf("bankBic %v, want %s: %v", card["bankBic"], c.wantBIC, card)
			}
		})
	}
}
