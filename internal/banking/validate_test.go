package banking

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestValidINN(t *testing.T) {
	for _, tc := range []struct {
		inn  string
		want bool
	}{
		{"7707083893", true}, {"7727406020", true}, {"7830002293", true}, {"500100732259", true},
		{"0", true}, {"12345", true},
		{"7707083894", false}, {"500100732258", false}, {"500100732249", false}, {"0012345678", false},
		{"770708389", false}, {"77070838931", false}, {"", false}, {"77070838a3", false},
	} {
		if got := ValidINN(tc.inn); got != tc.want {
			t.Errorf("ValidINN(%q) = %v, want %v", tc.inn, got, tc.want)
		}
	}
}

func TestValidKPPAndBIC(t *testing.T) {
	for _, tc := range []struct {
		kpp  string
		want bool
	}{{"773601001", true}, {"7736AB001", true}, {"0", true}, {"003601001", false}, {"77360100", false}, {"7736ab001", false}} {
		if got := ValidKPP(tc.kpp); got != tc.want {
			t.Errorf("ValidKPP(%q) = %v", tc.kpp, got)
		}
	}
	for _, tc := range []struct {
		bic  string
		want bool
	}{{"044525225", true}, {"017003983", true}, {"004525988", true}, {"144525225", false}, {"04452522", false}, {"04452522x", false}} {
		if got := ValidBIC(tc.bic); got != tc.want {
			t.Errorf("ValidBIC(%q) = %v", tc.bic, got)
		}
	}
	// A credit institution's BIC (and a Bank of Russia division's) opens
	// with 04; a treasury (TOFK) BIC with 0 but not 04 (§5.3).
	for _, tc := range []struct {
		bic  string
		want bool
	}{{"044525225", true}, {"044525000", true}, {"017003983", false}, {"004525988", false}, {"144525225", false}, {"04452522", false}} {
		if got := CreditInstitutionBIC(tc.bic); got != tc.want {
			t.Errorf("CreditInstitutionBIC(%q) = %v", tc.bic, got)
		}
	}
}

func TestAccountKeys(t *testing.T) {
	for _, tc := range []struct {
		acc, bic string
		corr     bool
		want     bool
	}{
		{"40602810700000000025", "049805746", false, true},
		{"40602810800000000025", "049805746", false, false},
		{"40702810538833411733", "044525225", false, true},
		{"40702810538833411734", "044525225", false, false},
		{"03100643000000018500", "017003983", false, true}, // treasury: no key
		{"30101810800000000746", "049805000", true, true},
		{"30101810400000000225", "044525225", true, true},
		{"30101810400000000225", "044525225", false, false}, // corr with the ordinary prefix fails
		{"40102810445370000059", "017003983", true, true},
		{"40102810445370000059", "017003983", false, false},
		{"4070281053883341173", "044525225", false, false},
		// An account held at a Bank of Russia division (BIC ending 000)
		// takes "0" + BIC digits 5–6, not BIC digits 7–9 (§5.4).
		{"40101810045250010041", "044525000", false, true},
		{"40101810945250010041", "044525000", false, false}, // right only with the prefix 000
		{"40101810145250010041", "044525000", false, false},
		{"30101810800000000746", "049805000", false, true},
		// 001 and 002 are Bank of Russia numbers as well.
		{"40101810045250010041", "044525001", false, true},
		{"40101810845250010041", "044525001", false, false},
		{"40101810045250010041", "044525002", false, true},
		{"40101810745250010041", "044525002", false, false},
		{"40101810545250010041", "045004001", false, true},
	} {
		var got bool
		if tc.corr {
			got = ValidCorrAccount(tc.acc, tc.bic)
		} else {
			got = ValidAccount(tc.acc, tc.bic)
		}
		if got != tc.want {
			t.Errorf("account %s bic %s corr=%v: got %v", tc.acc, tc.bic, tc.corr, got)
		}
	}
}

func TestValidUIN(t *testing.T) {
	for _, tc := range []struct {
		uin  string
		want bool
	}{
		{"18210102010011000116", true}, {"18210102010011000110", false}, {"0", true},
		{"00000000000000000000", false}, {"1234", true}, {"0000", false}, {"123456", false}, {"1821010201001100011a", false},
	} {
		if got := ValidUIN(tc.uin); got != tc.want {
			t.Errorf("ValidUIN(%q) = %v, want %v", tc.uin, got, tc.want)
		}
	}
	// The second pass (weights from 3) decides when the first gives 10.
	for body := range 200 {
		s := "1821010201001100" + itoa(1000 + body)[1:]
		if len(s) != 19 {
			continue
		}
		d := uinCheckDigit(s)
		if !ValidUIN(s + itoa(d)) {
			t.Fatalf("%s%d should be valid", s, d)
		}
	}
}

func TestAmountKopecks(t *testing.T) {
	for _, tc := range []struct {
		in   string
		k    int64
		want bool
	}{
		{"100", 10000, true}, {"100.5", 10050, true}, {"0.01", 1, true}, {"12345678901234.99", 1234567890123499, true},
		{"1.001", 0, false}, {"-1", 0, false}, {"1.", 0, false},
		// Exponent forms (JSON allows them; Jackson writes BigDecimal so)
		// count when exact in kopecks, parsed from the digits.
		{"1e3", 100000, true}, {"1.5E+3", 150000, true}, {"1.505e1", 1505, true}, {"1.500E0", 150, true},
		{"1e-2", 1, true}, {"100e-4", 1, true}, {"0.29e0", 29, true}, {"0e-999999999999", 0, true},
		{"1234567890123456.78E0", 123456789012345678, true}, {"9223372036854775807e-2", math.MaxInt64, true},
		{"1e-3", 0, false}, {"1.005e0", 0, false}, {"1e17", 0, false}, {"9223372036854775808e-2", 0, false},
		{"1e99999999999999999999", 0, false}, {"1e-99999999999999999999", 0, false},
		{"1e", 0, false}, {"1e+", 0, false}, {"e3", 0, false}, {".5e1", 0, false}, {"1.e1", 0, false}, {"1e1.5", 0, false},
		{"1e3e3", 0, false}, {"-1e3", 0, false}, {"1e--3", 0, false},
		// Longer than a partner may send, but what FormatKopecks writes for
		// an accepted "1234567890123456.9" or "1000000000000000": a stored
		// document must read back.
		{"1234567890123456.99", 123456789012345699, true}, {"1000000000000000.00", 100000000000000000, true},
		{"92233720368547758.07", math.MaxInt64, true}, {"92233720368547758.08", 0, false},
	} {
		k, ok := Amount(tc.in).Kopecks()
		if ok != tc.want || k != tc.k {
			t.Errorf("Kopecks(%q) = %d,%v want %d,%v", tc.in, k, ok, tc.k, tc.want)
		}
	}
}

// TestAmountLengthIsAnInputRule: the validation refuses an amount of more
// than 18 characters (reference §5.6), and every amount it accepts formats
// to a literal Kopecks reads back.
func TestAmountLengthIsAnInputRule(t *testing.T) {
	for _, tc := range []struct {
		amount string
		ok     bool
	}{{"1000000000000000", true}, {"123456789012345.67", true}, {"1234567890123456.9", true}, {"1234567890123456.99", false}} {
		d := validPayment()
		d.Amount = Amount(tc.amount)
		err := ValidatePayment(&d, time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
		if tc.ok != (err == nil) {
			t.Errorf("amount %q: %v, want accepted %v", tc.amount, err, tc.ok)
		}
		if err != nil {
			continue
		}
		k, _ := d.Amount.Kopecks()
		if back, ok := Amount(FormatKopecks(k)).Kopecks(); !ok || back != k {
			t.Errorf("amount %q: %d formats to %q, which reads back as %d, %v", tc.amount, k, FormatKopecks(k), back, ok)
		}
	}
}

// validPayment is a payment order every rule accepts.
func validPayment() Payment {
	return Payment{
		ExternalID: "0f8fad5b-d9cb-469f-a165-70867728950e", Date: "2026-11-20", Amount: "1500.50",
		OperationCode: "01", Priority: "5", Purpose: "Оплата по счёту № 1, без НДС",
		PayerName: "ООО Ромашка", PayerINN: "7707083893", PayerKPP: "773601001",
		PayerAccount: "40702810538833411733", PayerBankBIC: "044525225", PayerBankCorrAccount: "30101810400000000225",
		PayeeName: "АО Лютик", PayeeINN: "7830002293", PayeeKPP: "783001001", PayeeAccount: "40602810700000000025",
		PayeeBankBIC: "049805746", PayeeBankCorrAccount: "30101810800000000746",
	}
}

func TestValidatePayment(t *testing.T) {
	today := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		mutate func(*Payment)
		field  string
	}{
		{"ok", func(*Payment) {}, ""},
		{"bad payer inn", func(p *Payment) { p.PayerINN = "7707083894" }, "payerInn"},
		{"bad payee inn", func(p *Payment) { p.PayeeINN = "123" }, "payeeInn"},
		{"bad account key", func(p *Payment) { p.PayerAccount = "40702810538833411734" }, "payerAccount"},
		{"bad payee account key", func(p *Payment) { p.PayeeAccount = "40602810800000000025" }, "payeeAccount"},
		{"bad corr", func(p *Payment) { p.PayerBankCorrAccount = "30101810400000000226" }, "payerBankCorrAccount"},
		{"bad kpp", func(p *Payment) { p.PayerKPP = "12345" }, "payerKpp"},
		{"kpp with 12-digit inn", func(p *Payment) { p.PayerINN = "500100732259" }, "payerKpp"},
		{"bad bic", func(p *Payment) { p.PayeeBankBIC = "14452522" }, "payeeBankBic"},
		{"priority 6", func(p *Payment) { p.Priority = "6" }, "priority"},
		{"purpose too long", func(p *Payment) { p.Purpose = string(make([]rune, 211)) }, "purpose"},
		{"purpose missing", func(p *Payment) { p.Purpose = "" }, "purpose"},
		{"amount zero", func(p *Payment) { p.Amount = "0" }, "amount"},
		{"amount 3 decimals", func(p *Payment) { p.Amount = "1.001" }, "amount"},
		{"amount missing", func(p *Payment) { p.Amount = "" }, "amount"},
		{"externalId not uuid", func(p *Payment) { p.ExternalID = "x" }, "externalId"},
		{"date format", func(p *Payment) { p.Date = "20.11.2026" }, "date"},
		{"date too old", func(p *Payment) { p.Date = "2026-11-01" }, "date"},
		{"operation code", func(p *Payment) { p.OperationCode = "05" }, "operationCode"},
		{"income type to company", func(p *Payment) { p.IncomeTypeCode = "1" }, "incomeTypeCode"},
		{"urgency", func(p *Payment) { p.UrgencyCode = "FAST" }, "urgencyCode"},
		// The provider's urgency codes, and the Node SDK's misspelling
		// INTERTAL, which its validator sends for INTERNAL (reference §4).
		{"urgency INTERNAL", func(p *Payment) { p.UrgencyCode = "INTERNAL" }, ""},
		{"urgency INTERTAL", func(p *Payment) { p.UrgencyCode = "INTERTAL" }, ""},
		{"urgency INTERNAL_NOTIF", func(p *Payment) { p.UrgencyCode = "INTERNAL_NOTIF" }, ""},
		{"urgency OFFHOURS", func(p *Payment) { p.UrgencyCode = "OFFHOURS" }, ""},
		{"urgency BESP", func(p *Payment) { p.UrgencyCode = "BESP" }, ""},
		{"urgency NORMAL", func(p *Payment) { p.UrgencyCode = "NORMAL" }, ""},
		{"delivery kind электронно", func(p *Payment) { p.DeliveryKind = "электронно" }, ""},
		{"delivery kind срочно", func(p *Payment) { p.DeliveryKind = "срочно" }, ""},
		{"delivery kind 0", func(p *Payment) { p.DeliveryKind = "0" }, ""},
		{"delivery kind by post", func(p *Payment) { p.DeliveryKind = "почтой" }, "deliveryKind"},
		{"vo code of 5 digits", func(p *Payment) { p.VOCode = "61150" }, ""},
		{"vo code of 4 digits", func(p *Payment) { p.VOCode = "6115" }, "voCode"},
		{"number of 6 digits", func(p *Payment) { p.Number = "123456" }, ""},
		{"number of 7 digits", func(p *Payment) { p.Number = "1234567" }, "number"},
		{"priority 1", func(p *Payment) { p.Priority = "1" }, ""},
		{"priority 0", func(p *Payment) { p.Priority = "0" }, "priority"},
		// 02 and 06 are budget payments' alone (reference §4); the strict
		// reading answers them on another payment as a 400.
		{"operation code 02 outside the budget", func(p *Payment) { p.OperationCode = "02" }, "operationCode"},
		{"operation code 06 outside the budget", func(p *Payment) { p.OperationCode = "06" }, "operationCode"},
		{"operation code 02 (budget)", func(p *Payment) {
			p.OperationCode = "02"
			p.PayeeAccount, p.PayeeBankBIC, p.PayeeBankCorrAccount = "03100643000000018500", "017003983", "40102810445370000059"
		}, ""},
		{"operation code 06 (budget)", func(p *Payment) {
			p.OperationCode = "06"
			p.PayeeAccount, p.PayeeBankBIC, p.PayeeBankCorrAccount = "03100643000000018500", "017003983", "40102810445370000059"
		}, ""},
		{"amount of 18 characters", func(p *Payment) { p.Amount = "123456789012345.12" }, ""},
		{"amount of 19 characters", func(p *Payment) { p.Amount = "1234567890123456.12" }, "amount"},
		{"amount negative", func(p *Payment) { p.Amount = "-1" }, "amount"},
		{"line break in kbk", func(p *Payment) { p.DepartmentalInfo = &DepartmentalInfo{KBK: "1\npayerName=x"} }, "departmentalInfo.kbk"},
		{"line break in purpose", func(p *Payment) { p.Purpose = "a\r\nb" }, "purpose"},
		// The number of signatures is a signature-set rule, answered by the
		// verifier with WORKFLOW_FAULT (reference §7), not a format check.
		{"three signatures", func(p *Payment) { p.DigestSignatures = make([]DigestSignature, 3) }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := validPayment()
			tc.mutate(&p)
			err := ValidatePayment(&p, today)
			if tc.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || e.Kind != KindValidation {
				t.Fatalf("want VALIDATION_FAULT, got %v", err)
			}
			if !slices.Contains(e.FieldNames, tc.field) || len(e.FieldNames) != len(e.Checks) {
				t.Fatalf("fieldNames %v checks %v, want %s", e.FieldNames, e.Checks, tc.field)
			}
		})
	}
}

func TestCheckDepartmentalInfo(t *testing.T) {
	date := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	full := DepartmentalInfo{DrawerStatus101: "01", KBK: "18201061201010000510", OKTMO: "45328000", ReasonCode106: "0",
		TaxPeriod107: "0", DocNumber108: "0", DocDate109: "0", PaymentKind110: "0", UIP: "0"}
	noKind := full
	noKind.PaymentKind110 = ""
	for _, tc := range []struct {
		name  string
		di    *DepartmentalInfo
		field string
	}{
		{"null", nil, ""},
		{"all members", &full, ""},
		{"all but paymentKind110", &noKind, ""},
		{"only paymentKind110", &DepartmentalInfo{PaymentKind110: "0"}, ""},
		{"bad kbk", &DepartmentalInfo{DrawerStatus101: "01", KBK: "00000000000000000000"}, "departmentalInfo.kbk"},
		{"bad status", &DepartmentalInfo{DrawerStatus101: "02"}, "departmentalInfo.drawerStatus101"},
		{"bad oktmo", &DepartmentalInfo{OKTMO: "1234"}, "departmentalInfo.oktmo"},
		{"bad period", &DepartmentalInfo{TaxPeriod107: "МС.13.2026"}, "departmentalInfo.taxPeriod107"},
		{"quarter ok", &DepartmentalInfo{TaxPeriod107: "КВ.01.2026"}, ""},
		{"bad reason", &DepartmentalInfo{ReasonCode106: "XX"}, "departmentalInfo.reasonCode106"},
		{"uip of a wrong length", &DepartmentalInfo{UIP: "123456"}, "departmentalInfo.uip"},
		{"uip all zeros", &DepartmentalInfo{UIP: "00000000000000000000"}, "departmentalInfo.uip"},
		// The check digit and the UIN duty of statuses 31/33 are checks,
		// not the member's shape (InspectPayment, CheckBudgetRules).
		{"uip with a wrong check digit", &DepartmentalInfo{UIP: "18210102010011000110"}, ""},
		{"31 without uip", &DepartmentalInfo{DrawerStatus101: "31", UIP: "0"}, ""},
		{"bad doc date", &DepartmentalInfo{DocDate109: "2026-01-01"}, "departmentalInfo.docDate109"},
	} {
		field, why := CheckDepartmentalInfo(tc.di, date)
		if field != tc.field || (field != "" && why == "") {
			t.Errorf("%s: got %q (%s), want %q", tc.name, field, why, tc.field)
		}
	}
	// The field-101 sets go by the document date (reference §5.8): 02
	// (tax agent) until 2023, 33 from 2024, 34 from 2026-03-30; 09–12
	// are gone since 2021-10-01.
	day := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }
	for _, tc := range []struct {
		status string
		date   time.Time
		ok     bool
	}{
		{"02", day(2023, 12, 31), true},
		{"02", day(2024, 1, 1), false},
		{"33", day(2023, 12, 31), false},
		{"33", day(2024, 1, 1), true},
		{"34", day(2026, 3, 29), false},
		{"34", day(2026, 3, 30), true},
		{"09", day(2023, 5, 1), false},
		{"13", day(2026, 11, 20), true},
	} {
		f, _ := CheckDepartmentalInfo(&DepartmentalInfo{DrawerStatus101: tc.status}, tc.date)
		if (f == "") != tc.ok {
			t.Errorf("status %s on %s: field %q, want ok=%v", tc.status, tc.date.Format(time.DateOnly), f, tc.ok)
		}
	}
}

func TestCheckBudgetRules(t *testing.T) {
	enp := func() Payment {
		p := validPayment()
		p.PayeeAccount, p.PayeeBankBIC, p.PayeeBankCorrAccount = ENPPayeeAccount, ENPPayeeBIC, ENPPayeeCorrAcc
		p.PayeeINN, p.PayeeKPP, p.PayerKPP = ENPPayeeINN, "770701001", "0"
		p.DepartmentalInfo = &DepartmentalInfo{DrawerStatus101: "01", KBK: ENPKBK, OKTMO: "0", ReasonCode106: "0",
			TaxPeriod107: "0", DocNumber108: "0", DocDate109: "0", UIP: "0"}
		return p
	}
	for _, tc := range []struct {
		name   string
		mutate func(*Payment)
		field  string
	}{
		{"enp ok", func(*Payment) {}, ""},
		{"customs ok", func(p *Payment) {
			p.PayeeAccount, p.PayeeKPP, p.PayerKPP = "03100643000000019502", "773001001", "773601001"
			p.DepartmentalInfo.DrawerStatus101, p.DepartmentalInfo.KBK, p.DepartmentalInfo.OKTMO = "06", "15311009000010000180", "45328000"
			// Customs fields (§5.8): reason 00 without a basis document,
			// field 107 the customs office's 8-digit code.
			p.DepartmentalInfo.ReasonCode106, p.DepartmentalInfo.TaxPeriod107 = "00", "10702000"
		}, ""},
		{"no budget block", func(p *Payment) { p.DepartmentalInfo = nil; p.PayeeAccount = "40602810700000000025" }, ""},
		// An ordinary payee is not a budget payment: the spec's sandbox
		// accepts its departmentalInfo shapes there (reference §4).
		{"status 01 to a bank account", func(p *Payment) {
			p.PayeeAccount, p.PayeeBankBIC, p.PayeeBankCorrAccount = "40602810700000000025", "049805746", "30101810800000000746"
		}, ""},
		{"status 01 to 03212", func(p *Payment) { p.PayeeAccount = "03212643000000018500" }, "payeeAccount"},
		{"03100 without a budget block", func(p *Payment) { p.DepartmentalInfo = nil }, "departmentalInfo.drawerStatus101"},
		{"ЕКС payee bank makes it budget", func(p *Payment) {
			p.PayeeAccount, p.PayeeBankCorrAccount = "40602810700000000025", "40102810445370000059"
		}, "payeeAccount"},
		{"status 31 without uin", func(p *Payment) {
			p.PayeeAccount = "03212643000000018500"
			p.DepartmentalInfo.DrawerStatus101, p.DepartmentalInfo.KBK = "31", "15311601201010001140"
		}, "departmentalInfo.uip"},
		{"non-ЕНП tax without oktmo", func(p *Payment) { p.DepartmentalInfo.KBK, p.PayerKPP = "18210102010011000110", "773601001" }, "departmentalInfo.oktmo"},
		{"non-ЕНП to 03234 may omit oktmo", func(p *Payment) {
			p.PayeeAccount, p.PayerKPP = "03234643000000018500", "773601001"
			p.DepartmentalInfo.DrawerStatus101, p.DepartmentalInfo.KBK = "08", "18210102010011000110"
		}, ""},
		{"status 31 to 03100", func(p *Payment) {
			p.DepartmentalInfo.DrawerStatus101, p.DepartmentalInfo.KBK, p.DepartmentalInfo.UIP = "31", "15311601201010001140", "18210102010011000116"
		}, "payeeAccount"},
		{"status 33 without uin", func(p *Payment) { p.DepartmentalInfo.DrawerStatus101 = "33"; p.DepartmentalInfo.KBK = "1" }, "departmentalInfo.uip"},
		{"enp with oktmo", func(p *Payment) { p.DepartmentalInfo.OKTMO = "45328000" }, "departmentalInfo.oktmo"},
		// Order 58n's payer KPP rules (§5.2), by the document date.
		{"enp with the payer's kpp", func(p *Payment) { p.PayerKPP = "773601001" }, "payerKpp"},
		{"enp with the payer's kpp before 2026-04-01", func(p *Payment) { p.Date, p.PayerKPP = "2026-03-31", "773601001" }, ""},
		{"enp of a foreign organisation with its kpp", func(p *Payment) { p.PayerINN, p.PayerKPP = "9909123454", "773601001" }, ""},
		{"enp of a sole proprietor", func(p *Payment) { p.PayerINN = "500100732259" }, ""},
		{"tax payment with payer kpp 0", func(p *Payment) {
			p.DepartmentalInfo.KBK, p.DepartmentalInfo.OKTMO = "18210102010011000110", "45328000"
		}, "payerKpp"},
		{"tax payment without payer kpp before 2026-04-01", func(p *Payment) {
			p.Date, p.PayerKPP, p.DepartmentalInfo.KBK, p.DepartmentalInfo.OKTMO = "2026-03-31", "", "18210102010011000110", "45328000"
		}, ""},
		{"tax payment with the payer's kpp", func(p *Payment) {
			p.PayerKPP, p.DepartmentalInfo.KBK, p.DepartmentalInfo.OKTMO = "773601001", "18210102010011000110", "45328000"
		}, ""},
		{"sole proprietor's tax payment without kpp", func(p *Payment) {
			p.PayerINN, p.DepartmentalInfo.KBK, p.DepartmentalInfo.OKTMO = "500100732259", "18210102010011000110", "45328000"
		}, ""},
		// The ЕНП payee's KPP is versioned by the document date (§5.8).
		{"enp before 2025-12-05 to the old kpp", func(p *Payment) { p.Date, p.PayeeKPP = "2025-12-04", "770801001" }, ""},
		{"enp before 2025-12-05 to the new kpp", func(p *Payment) { p.Date = "2025-12-04" }, "payeeKpp"},
		{"enp from 2025-12-05 to the old kpp", func(p *Payment) { p.Date, p.PayeeKPP = "2025-12-05", "770801001" }, "payeeKpp"},
		{"enp without the payee corr account", func(p *Payment) { p.PayeeBankCorrAccount = "" }, ""},
		{"enp to another payee inn", func(p *Payment) { p.PayeeINN = "7707083893" }, "payeeInn"},
		{"enp to the customs account", func(p *Payment) { p.PayeeAccount = "03100643000000019502" }, "payeeAccount"},
		// Field 104 may be 0 only off the tax and customs account 03100.
		{"03100 without kbk", func(p *Payment) { p.DepartmentalInfo.KBK = "" }, "departmentalInfo.kbk"},
		{"03100 with kbk 0", func(p *Payment) { p.DepartmentalInfo.KBK = "0" }, "departmentalInfo.kbk"},
		{"status 31 to 03212 with kbk 0", func(p *Payment) {
			p.PayeeAccount, p.PayerKPP = "03212643000000018500", "773601001"
			di := p.DepartmentalInfo
			di.DrawerStatus101, di.KBK, di.UIP = "31", "0", "18210102010011000116"
		}, ""},
	} {
		p := enp()
		tc.mutate(&p)
		if f, why := CheckBudgetRules(&p); f != tc.field {
			t.Errorf("%s: got %q (%s), want %q", tc.name, f, why, tc.field)
		}
	}
}

// A draft from a budget invoice pays into the budget by its kind (reference
// §4.1), so CheckBudgetDraftRules asks of every such draft a drawer status
// and a budget payee, where a payment order's rules apply by its payee.
func TestCheckBudgetDraftRules(t *testing.T) {
	enpDraft := func() Payment {
		p := validPayment()
		p.PayerAccount, p.PayerINN, p.PayerKPP = "", "", ""
		p.PayeeAccount, p.PayeeBankBIC, p.PayeeBankCorrAccount = ENPPayeeAccount, ENPPayeeBIC, ENPPayeeCorrAcc
		p.PayeeINN, p.PayeeKPP = ENPPayeeINN, "770701001"
		p.DepartmentalInfo = &DepartmentalInfo{DrawerStatus101: "01", KBK: ENPKBK, OKTMO: "0"}
		return p
	}
	ordinary := func(p *Payment) {
		p.PayeeAccount, p.PayeeBankBIC, p.PayeeBankCorrAccount = "40602810700000000025", "049805746", "30101810800000000746"
	}
	for _, tc := range []struct {
		name   string
		mutate func(*Payment)
		field  string
	}{
		{"enp", func(*Payment) {}, ""},
		{"empty block", func(p *Payment) { p.DepartmentalInfo = &DepartmentalInfo{} }, "departmentalInfo.drawerStatus101"},
		{"only paymentKind110", func(p *Payment) { p.DepartmentalInfo = &DepartmentalInfo{PaymentKind110: "0"} }, "departmentalInfo.drawerStatus101"},
		{"empty block to an ordinary account", func(p *Payment) { ordinary(p); p.DepartmentalInfo = &DepartmentalInfo{} }, "departmentalInfo.drawerStatus101"},
		// Status 08's routing leaves the payee open: a payment order to an
		// ordinary account with it is no budget payment, a budget draft is
		// misrouted.
		{"status 08 to an ordinary account", func(p *Payment) {
			ordinary(p)
			p.DepartmentalInfo.DrawerStatus101, p.DepartmentalInfo.KBK, p.DepartmentalInfo.OKTMO = "08", "18210202010061010160", "45328000"
		}, "payeeAccount"},
		{"status 01 to an ordinary account", ordinary, "payeeAccount"},
		{"tax without kbk", func(p *Payment) { p.DepartmentalInfo.KBK = "0" }, "departmentalInfo.kbk"},
	} {
		p := enpDraft()
		tc.mutate(&p)
		if f, why := CheckBudgetDraftRules(&p); f != tc.field {
			t.Errorf("%s: got %q (%s), want %q", tc.name, f, why, tc.field)
		}
	}
}

// InspectPayment sorts each failure by where it lands (reference §13): the
// shape of a field is a format error (always 400), a check digit or a
// logical control a check (CHECKERROR or 400 by mode), a malformed
// departmentalInfo member the spec's CHECKERROR.
func TestInspectPaymentSortsFindings(t *testing.T) {
	today := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	treasury := func(p *Payment) {
		p.PayeeAccount, p.PayeeBankBIC, p.PayeeBankCorrAccount = "03100643000000018500", "017003983", "40102810445370000059"
		p.PayeeINN, p.PayeeKPP = "7727406020", "770701001"
	}
	for _, tc := range []struct {
		name           string
		mutate         func(*Payment)
		format, checks string // the one field expected in each list ("" none)
		dept           string
	}{
		{"ok", func(*Payment) {}, "", "", ""},
		{"payer inn check digit", func(p *Payment) { p.PayerINN = "7707083894" }, "", "payerInn", ""},
		{"payee inn check digit (12)", func(p *Payment) { p.PayeeINN = "500100732258" }, "", "payeeInn", ""},
		{"inn shape", func(p *Payment) { p.PayerINN = "770708389" }, "payerInn", "", ""},
		{"inn leading 00", func(p *Payment) { p.PayeeINN = "0012345678" }, "payeeInn", "", ""},
		{"payer account key", func(p *Payment) { p.PayerAccount = "40702810538833411734" }, "", "payerAccount", ""},
		{"payee account key", func(p *Payment) { p.PayeeAccount = "40602810800000000025" }, "", "payeeAccount", ""},
		{"corr account key", func(p *Payment) { p.PayerBankCorrAccount = "30101810400000000226" }, "", "payerBankCorrAccount", ""},
		{"payee corr account key", func(p *Payment) { p.PayeeBankCorrAccount = "30101810800000000747" }, "", "payeeBankCorrAccount", ""},
		{"account shape", func(p *Payment) { p.PayeeAccount = "4060281080000000002" }, "payeeAccount", "", ""},
		{"kpp with 12-digit inn", func(p *Payment) { p.PayerINN = "500100732259" }, "", "payerKpp", ""},
		{"income type to a company", func(p *Payment) { p.IncomeTypeCode = "1" }, "", "incomeTypeCode", ""},
		{"income type 7, the SDKs' form", func(p *Payment) { p.IncomeTypeCode = "7" }, "", "incomeTypeCode", ""},
		{"kpp opening with 00", func(p *Payment) { p.PayeeKPP = "003601001" }, "", "payeeKpp", ""},
		{"kpp with lower-case letters", func(p *Payment) { p.PayeeKPP = "7830ab001" }, "payeeKpp", "", ""},
		{"kpp with capital letters", func(p *Payment) { p.PayeeKPP = "7830AB001" }, "", "", ""},
		{"bic without the country code", func(p *Payment) { p.PayeeBankBIC = "149805746" }, "", "payeeBankBic", ""},
		{"bic of 8 digits", func(p *Payment) { p.PayerBankBIC = "04452522" }, "payerBankBic", "", ""},
		{"name of 160 characters", func(p *Payment) { p.PayerName = strings.Repeat("я", 160) }, "", "", ""},
		{"purpose in the rules' characters", func(p *Payment) {
			p.Purpose = "Оплата по счёту № 7 от 01.11.2026 «Ёлка» — 100% (Invoice #7; x+y=z), без НДС…"
		}, "", "", ""},
		{"purpose with an emoji", func(p *Payment) { p.Purpose = "Оплата 😀" }, "", "purpose", ""},
		{"purpose 0 outside a single tax payment", func(p *Payment) { p.Purpose = "0" }, "", "purpose", ""},
		{"purpose 0 of a single tax payment", func(p *Payment) {
			treasury(p)
			p.Purpose, p.PayerKPP = "0", "0"
			p.DepartmentalInfo = &DepartmentalInfo{DrawerStatus101: "01", KBK: ENPKBK, OKTMO: "0", ReasonCode106: "0", TaxPeriod107: "0", DocNumber108: "0", DocDate109: "0", UIP: "0"}
		}, "", "", ""},
		{"purpose with a control character", func(p *Payment) { p.Purpose = "Оплата\x00" }, "", "purpose", ""},
		{"name of 161 characters", func(p *Payment) { p.PayerName = strings.Repeat("я", 161) }, "", "payerName", ""},
		{"name of 254 characters", func(p *Payment) { p.PayeeName = strings.Repeat("я", 254) }, "", "payeeName", ""},
		{"name of 255 characters", func(p *Payment) { p.PayeeName = strings.Repeat("я", 255) }, "payeeName", "", ""},
		{"income type 0", func(p *Payment) { p.IncomeTypeCode = "0" }, "incomeTypeCode", "", ""},
		{"income type of 7 digits", func(p *Payment) { p.IncomeTypeCode = "1234567" }, "incomeTypeCode", "", ""},
		{"income type not digits", func(p *Payment) { p.IncomeTypeCode = "A" }, "incomeTypeCode", "", ""},
		{"uin check digit", func(p *Payment) { p.DepartmentalInfo = &DepartmentalInfo{UIP: "18210102010011000110"} }, "", "departmentalInfo.uip", ""},
		{"uin shape", func(p *Payment) { p.DepartmentalInfo = &DepartmentalInfo{UIP: "123"} }, "", "", "departmentalInfo.uip"},
		{"kbk shape", func(p *Payment) { p.DepartmentalInfo = &DepartmentalInfo{KBK: "123"} }, "", "", "departmentalInfo.kbk"},
		{"budget routing", func(p *Payment) {
			treasury(p)
			p.PayeeAccount = "03212643000000018500"
			p.DepartmentalInfo = &DepartmentalInfo{DrawerStatus101: "01", KBK: ENPKBK, OKTMO: "0"}
		}, "", "payeeAccount", ""},
		// Operation codes 02 and 06 are for budget payments alone
		// (reference §4): elsewhere a logical control, not a format.
		{"operation code 02 outside the budget", func(p *Payment) { p.OperationCode = "02" }, "", "operationCode", ""},
		{"operation code 06 outside the budget", func(p *Payment) { p.OperationCode = "06" }, "", "operationCode", ""},
		{"operation code 06 of a budget payment", func(p *Payment) {
			treasury(p)
			p.OperationCode, p.PayerKPP = "06", "0"
			p.DepartmentalInfo = &DepartmentalInfo{DrawerStatus101: "01", KBK: ENPKBK, OKTMO: "0", ReasonCode106: "0", TaxPeriod107: "0", DocNumber108: "0", DocDate109: "0", UIP: "0"}
		}, "", "", ""},
		{"operation code 03", func(p *Payment) { p.OperationCode = "03" }, "operationCode", "", ""},
		{"budget ЕНП ok", func(p *Payment) {
			treasury(p)
			p.PayerKPP = "0"
			p.DepartmentalInfo = &DepartmentalInfo{DrawerStatus101: "01", KBK: ENPKBK, OKTMO: "0", ReasonCode106: "0", TaxPeriod107: "0", DocNumber108: "0", DocDate109: "0", UIP: "0"}
		}, "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := validPayment()
			tc.mutate(&p)
			f := InspectPayment(&p, today, true)
			if got := f.format.fields; (tc.format == "") != (len(got) == 0) || (tc.format != "" && !slices.Contains(got, tc.format)) {
				t.Fatalf("format %v, want %q", got, tc.format)
			}
			fields, checks := f.Checks()
			if (tc.checks == "") != (len(fields) == 0) || (tc.checks != "" && !slices.Contains(fields, tc.checks)) || len(fields) != len(checks) {
				t.Fatalf("checks %v %v, want %q", fields, checks, tc.checks)
			}
			if f.deptField != tc.dept {
				t.Fatalf("departmentalInfo %q, want %q", f.deptField, tc.dept)
			}
			// Default mode: only format failures are a 400; checks and the
			// block's shape become the CHECKERROR comment naming the field.
			if err := f.Err(ChecksCheckError); (err != nil) != (tc.format != "") {
				t.Fatalf("checkerror mode err %v", err)
			}
			if name := tc.checks + tc.dept; name != "" && !strings.Contains(f.CheckError(), "Ошибка в поле "+name+": ") {
				t.Fatalf("comment %q does not name %s", f.CheckError(), name)
			}
			// Reject mode: a failed check is a 400 naming the field.
			err := f.Err(ChecksReject)
			var e *Error
			if (err != nil) != (tc.format != "" || tc.checks != "") || (err != nil && (!errors.As(err, &e) || e.Kind != KindValidation)) {
				t.Fatalf("reject mode err %v", err)
			}
		})
	}
	// Budget rules off: the routing failure is not looked for.
	p := validPayment()
	treasury(&p)
	p.PayeeAccount = "03212643000000018500"
	p.DepartmentalInfo = &DepartmentalInfo{DrawerStatus101: "01", KBK: ENPKBK, OKTMO: "0"}
	if f := InspectPayment(&p, today, false); f.CheckError() != "" {
		t.Fatalf("rules off: %q", f.CheckError())
	}
}

// WithControlKey sets the one key digit that makes an account valid at a
// BIC, and finds none for a malformed account or BIC.
func TestWithControlKey(t *testing.T) {
	for _, tc := range []struct {
		account, bic string
		ok           bool
	}{
		{"40702810000000000777", "044525593", true},
		{"40702840000000000131", SandboxBIC, true},
		{"4070281000000000077", "044525593", false},
		{"40702810000000000777", "04452559", false},
	} {
		got, ok := WithControlKey(tc.account, tc.bic)
		if ok != tc.ok || ok && (!ValidAccount(got, tc.bic) || got[:8] != tc.account[:8] || got[9:] != tc.account[9:]) {
			t.Errorf("WithControlKey(%s, %s) = %s, %v", tc.account, tc.bic, got, ok)
		}
	}
}
