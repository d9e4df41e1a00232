package main

import (
	"strings"
	"testing"

	"partnerapi/internal/banking"
)

// TestBankingTokenUnknownScope: `banking token` issues tokens for the
// scopes of reference §2 only; a misspelt or unknown scope is refused with
// an error naming it and every known scope, and nothing is issued.
func TestBankingTokenUnknownScope(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		scope string
		bad   string // "": issued
	}{
		{"PAY_DOC_RU", ""},
		{"openid " + strings.Join(banking.Scopes, " "), ""},
		{"NOPE", "NOPE"},
		{"PAY_DOC_RU pay_doc_ru", "pay_doc_ru"},
		{"openid inn PAY_DOC_RU", "inn"},
	} {
		out, err := runCLI(t, "banking", "token", "--scope", tc.scope, "--data-dir", dir)
		if tc.bad == "" {
			if err != nil || out["access_token"] == nil {
				t.Errorf("%q: %v %v", tc.scope, out, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%q: issued %v, want refused", tc.scope, out)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, "unknown scope "+tc.bad) {
			t.Errorf("%q: %q does not name %s", tc.scope, msg, tc.bad)
		}
		for _, s := range banking.Scopes {
			if !strings.Contains(msg, s) {
				t.Errorf("%q: %q does not name the known scope %s", tc.scope, msg, s)
			}
		}
	}
}
