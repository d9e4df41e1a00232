package bankapi

import (
	"context"
	"strconv"
	"testing"

	"partnerapi/internal/banking"
)

// /v1/client-info's orgForm is the organisation's own legal form: the one
// its recorded name opens with, else ИП for a sole proprietor's 12-digit
// INN, else empty rather than a guessed ООО; closeDate stays null, the bank
// keeping no close dates.
func TestClientInfoOrgForm(t *testing.T) {
	e := newIDEnv(t)
	ctx := context.Background()
	for i, tc := range []struct {
		name, short, full, inn string
		form                   string
	}{
		{"sandbox ООО", "", "", "", "ООО"}, // the seeded organisation
		{"sole proprietor by INN", "Иванов Иван Иванович", "", "500100732259", "ИП"},
		{"sole proprietor by name", "ИП Петров П. П.", "", "500100732259", "ИП"},
		{"joint-stock company", "АО «Лютик»", "", "7830002293", "АО"},
		{"public company by its full name", "Банк", "Публичное акционерное общество «Банк»", "7707083893", "ПАО"},
		{"limited company in lower case", "ооо Ромашка", "", "7727406020", "ООО"},
		{"name without a form", "Ромашка", "", "7727406020", ""},
		{"a word that opens like a form", "Аорта", "", "7727406020", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			org := banking.SandboxOrgID
			if tc.short != "" {
				org = "org-form-" + strconv.Itoa(i)
				if err := e.id.Store.CreateOrg(ctx, banking.Organisation{ID: org, Name: tc.short, FullName: tc.full, INN: tc.inn}); err != nil {
					t.Fatal(err)
				}
			}
			tok, err := e.id.IssueTokens(ctx, banking.SandboxClientID, org, "", []string{banking.ScopeGetClientAccounts})
			if err != nil {
				t.Fatal(err)
			}
			var ci map[string]any
			if status, eb := e.get(t, "/fintech/api/v1/client-info", tok.AccessToken, &ci); status != 200 {
				t.Fatalf("%d %+v", status, eb)
			}
			if ci["orgForm"] != tc.form {
				t.Fatalf("orgForm %q, want %q", ci["orgForm"], tc.form)
			}
			for _, a := range ci["accounts"].([]any) {
				if a.(map[string]any)["closeDate"] != nil {
					t.Fatalf("closeDate %v", a)
				}
			}
		})
	}
}
