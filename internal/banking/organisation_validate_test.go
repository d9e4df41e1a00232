package banking

import (
	"slices"
	"testing"
)

// An organisation and its accounts are registered with the numbers the
// bank's own checks accept (reference §5.1–§5.4): an INN or OGRN whose
// check digit is wrong, a KPP no tax office issues or an account whose
// control key fails against its BIC would make every payment of the
// organisation fail its logical control.
func TestOrganisationValidateCheckDigits(t *testing.T) {
	org := func(inn, kpp, ogrn string) Organisation {
		return Organisation{Name: "ООО", INN: inn, KPP: kpp, OGRN: ogrn}
	}
	for _, tc := range []struct {
		name string
		o    Organisation
		bad  string // "" valid
	}{
		{"sandbox", org(SandboxOrgINN, SandboxOrgKPP, SandboxOrgOGRN), ""},
		{"sole proprietor", org("500100732259", "", "304500116000157"), ""},
		{"kpp with letters", org("7707083893", "7736AB001", ""), ""},
		{"inn check digit", org("7707083894", SandboxOrgKPP, ""), "inn"},
		{"inn (12) check digit", org("500100732258", "", ""), "inn"},
		{"inn opening with 00", org("0012345678", SandboxOrgKPP, ""), "inn"},
		{"kpp opening with 00", org(SandboxOrgINN, "003601001", ""), "kpp"},
		{"kpp 0", org(SandboxOrgINN, "0", ""), "kpp"},
		{"kpp of a sole proprietor", org("500100732259", "773601001", ""), "kpp"},
		{"ogrn check digit", org(SandboxOrgINN, SandboxOrgKPP, "1027700132194"), "ogrn"},
		{"ogrnip check digit", org("500100732259", "", "304500116000158"), "ogrn"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.o.Validate()
			if tc.bad == "" {
				if err != nil {
					t.Fatalf("valid organisation refused: %v", err)
				}
				return
			}
			e, ok := err.(*Error)
			if !ok || e.Kind != KindValidation || !slices.Contains(e.FieldNames, tc.bad) || len(e.Checks) != len(e.FieldNames) {
				t.Fatalf("got %v, want a validation error naming %s", err, tc.bad)
			}
		})
	}
}

func TestAccountValidateControlKey(t *testing.T) {
	acc := func(number, bic, corr string) Account {
		return Account{Number: number, BIC: bic, CorrAccount: corr, Status: AccountOpen}
	}
	for _, tc := range []struct {
		name string
		a    Account
		bad  string
	}{
		{"sandbox", acc(SandboxAccount, SandboxBIC, SandboxCorrAccount), ""},
		{"no corr account", acc("40602810700000000025", "049805746", ""), ""},
		{"account key", acc("40702810538833411734", SandboxBIC, SandboxCorrAccount), "number"},
		{"corr account key", acc(SandboxAccount, SandboxBIC, "30101810400000000226"), "corrAccount"},
		{"bic without the country code", acc(SandboxAccount, "144525225", ""), "bic"},
		// Treasury (TOFK) BICs, 0 but not 04 (§5.3), with numbers whose
		// key fits them, so only the BIC's kind can refuse them.
		{"treasury bic 017003983", acc("40702810900000000001", "017003983", ""), "bic"},
		{"treasury bic 004525988", acc("40702810400000000001", "004525988", ""), "bic"},
		{"treasury account at a treasury bic", acc("03100643000000018500", "017003983", ""), "bic"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.a.Validate()
			if tc.bad == "" {
				if err != nil {
					t.Fatalf("valid account refused: %v", err)
				}
				return
			}
			e, ok := err.(*Error)
			if !ok || e.Kind != KindValidation || !slices.Contains(e.FieldNames, tc.bad) || len(e.Checks) != len(e.FieldNames) {
				t.Fatalf("got %v, want a validation error naming %s", err, tc.bad)
			}
		})
	}
}

// TestAccountValidateCloseDate: a close date (client-info's closeDate,
// reference §10) is a date, of a CLOSED account, not before its opening;
// an opening date, where one is given, is a date too.
func TestAccountValidateCloseDate(t *testing.T) {
	acc := func(status, open, closed string) Account {
		return Account{Number: SandboxAccount, BIC: SandboxBIC, CorrAccount: SandboxCorrAccount, Status: status, OpenDate: open, CloseDate: closed}
	}
	for _, tc := range []struct {
		name string
		a    Account
		bad  string
	}{
		{"closed on a day", acc(AccountClosed, "2020-01-01", "2025-03-31"), ""},
		{"closed the day it opened", acc(AccountClosed, "2020-01-01", "2020-01-01"), ""},
		{"closed, day not known", acc(AccountClosed, "2020-01-01", ""), ""},
		{"open without one", acc(AccountOpen, "2020-01-01", ""), ""},
		{"open with one", acc(AccountOpen, "2020-01-01", "2025-03-31"), "closeDate"},
		{"blocked with one", acc(AccountBlocked, "2020-01-01", "2025-03-31"), "closeDate"},
		{"not a date", acc(AccountClosed, "2020-01-01", "31.03.2025"), "closeDate"},
		{"no such day", acc(AccountClosed, "2020-01-01", "2025-02-30"), "closeDate"},
		{"before the opening", acc(AccountClosed, "2020-01-01", "2019-12-31"), "closeDate"},
		{"opened, day not known", acc(AccountOpen, "", ""), ""},
		{"opening not a date", acc(AccountOpen, "01.01.2020", ""), "openDate"},
		{"opening no such day", acc(AccountOpen, "2020-02-30", ""), "openDate"},
		{"closed, opening not a date", acc(AccountClosed, "2020", "2025-03-31"), "openDate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.a.Validate()
			if tc.bad == "" {
				if err != nil {
					t.Fatalf("valid account refused: %v", err)
				}
				return
			}
			e, ok := err.(*Error)
			if !ok || e.Kind != KindValidation || !slices.Contains(e.FieldNames, tc.bad) || len(e.Checks) != len(e.FieldNames) {
				t.Fatalf("got %v, want a validation error naming %s", err, tc.bad)
			}
		})
	}
}
