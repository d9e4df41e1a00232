package banking

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// customsPayment is a customs payment every §5.8 rule accepts: a legal
// entity (status 06) paying an advance to the FTS, reason 00 (no basis
// document), the Vladivostok customs office's code in field 107.
func customsPayment() Payment {
	p := validPayment()
	p.PayeeName, p.PayeeINN, p.PayeeKPP = "МОУ ФК (ФТС России)", "7730176610", "773001001"
	p.PayeeAccount, p.PayeeBankBIC, p.PayeeBankCorrAccount = "03100643000000019502", "024501901", "40102810045370000002"
	p.DepartmentalInfo = &DepartmentalInfo{DrawerStatus101: "06", KBK: "15311009000010000110", OKTMO: "45328000",
		ReasonCode106: "00", TaxPeriod107: "10702000", DocNumber108: "0", DocDate109: "0", UIP: "0"}
	return p
}

// The customs rules of §5.8, written from the reference's table: fields
// 105–109 of a payment to the FTS and its payee requisites.
func TestCheckBudgetRulesCustoms(t *testing.T) {
	di := func(f func(*DepartmentalInfo)) func(*Payment) { return func(p *Payment) { f(p.DepartmentalInfo) } }
	for _, tc := range []struct {
		name   string
		mutate func(*Payment)
		field  string
	}{
		{"reason 00 with 0", func(*Payment) {}, ""},
		{"reason 00 with 00", di(func(d *DepartmentalInfo) { d.DocNumber108, d.DocDate109 = "00", "00" }), ""},
		{"declaration (ПК) of 7 characters", di(func(d *DepartmentalInfo) {
			d.ReasonCode106, d.DocNumber108, d.DocDate109 = "ПК", "1234567", "15.11.2026"
		}), ""},
		{"excise (КЭ) number of 15 characters", di(func(d *DepartmentalInfo) {
			d.ReasonCode106, d.DocNumber108, d.DocDate109 = "КЭ", "10702000-123456", "15.11.2026"
		}), ""},
		{"status 16", di(func(d *DepartmentalInfo) { d.DrawerStatus101 = "16" }), ""},
		{"status 17", di(func(d *DepartmentalInfo) { d.DrawerStatus101 = "17" }), ""},
		{"status 28", di(func(d *DepartmentalInfo) { d.DrawerStatus101 = "28" }), ""},
		{"status 30", di(func(d *DepartmentalInfo) { d.DrawerStatus101 = "30" }), ""},

		// Payee requisites and OKTMO (§5.8 requisites table, field 105).
		{"status 06 to the tax service's account", func(p *Payment) { p.PayeeAccount = "03100643000000018500" }, "payeeAccount"},
		{"status 06 to a 03212 account", func(p *Payment) { p.PayeeAccount = "03212643000000018500" }, "payeeAccount"},
		{"payee kpp of the tax service", func(p *Payment) { p.PayeeKPP = "770701001" }, "payeeKpp"},
		{"oktmo of Moscow region", di(func(d *DepartmentalInfo) { d.OKTMO = "46000000" }), "departmentalInfo.oktmo"},
		{"oktmo 0", di(func(d *DepartmentalInfo) { d.OKTMO = "0" }), "departmentalInfo.oktmo"},

		// Field 106 from the customs set only.
		{"reason 0", di(func(d *DepartmentalInfo) { d.ReasonCode106 = "0" }), "departmentalInfo.reasonCode106"},
		{"reason empty", di(func(d *DepartmentalInfo) { d.ReasonCode106 = "" }), "departmentalInfo.reasonCode106"},
		{"tax reason ТП", di(func(d *DepartmentalInfo) { d.ReasonCode106 = "ТП" }), "departmentalInfo.reasonCode106"},
		{"reason ИН", di(func(d *DepartmentalInfo) { d.ReasonCode106, d.DocNumber108, d.DocDate109 = "ИН", "5", "01.11.2026" }), ""},

		// Field 107: exactly 8 digits.
		{"period 0", di(func(d *DepartmentalInfo) { d.TaxPeriod107 = "0" }), "departmentalInfo.taxPeriod107"},
		{"period empty", di(func(d *DepartmentalInfo) { d.TaxPeriod107 = "" }), "departmentalInfo.taxPeriod107"},
		{"period of 7 digits", di(func(d *DepartmentalInfo) { d.TaxPeriod107 = "1070200" }), "departmentalInfo.taxPeriod107"},
		{"tax period МС", di(func(d *DepartmentalInfo) { d.TaxPeriod107 = "МС.10.2026" }), "departmentalInfo.taxPeriod107"},
		{"date as period", di(func(d *DepartmentalInfo) { d.TaxPeriod107 = "15.11.2026" }), "departmentalInfo.taxPeriod107"},

		// Field 108 by the reason.
		{"reason 00 with a number", di(func(d *DepartmentalInfo) { d.DocNumber108 = "123" }), "departmentalInfo.docNumber108"},
		{"reason 00 with 108 empty", di(func(d *DepartmentalInfo) { d.DocNumber108 = "" }), "departmentalInfo.docNumber108"},
		{"notice (УВ) of 8 characters", di(func(d *DepartmentalInfo) {
			d.ReasonCode106, d.DocNumber108, d.DocDate109 = "УВ", "12345678", "15.11.2026"
		}), "departmentalInfo.docNumber108"},
		{"receipt (ТД) of 7 Cyrillic characters", di(func(d *DepartmentalInfo) {
			d.ReasonCode106, d.DocNumber108, d.DocDate109 = "ТД", "АБВГДЕЖ", "15.11.2026"
		}), ""},
		{"guarantee (ТГ) of 8 Cyrillic characters", di(func(d *DepartmentalInfo) {
			d.ReasonCode106, d.DocNumber108, d.DocDate109 = "ТГ", "АБВГДЕЖЗ", "15.11.2026"
		}), "departmentalInfo.docNumber108"},
		{"declaration (ПК) without a number", di(func(d *DepartmentalInfo) {
			d.ReasonCode106, d.DocNumber108, d.DocDate109 = "ПК", "", "15.11.2026"
		}), "departmentalInfo.docNumber108"},

		// Field 109: a 10-character date, 0/00 only without a document.
		{"declaration dated 0", di(func(d *DepartmentalInfo) { d.ReasonCode106, d.DocNumber108, d.DocDate109 = "ПК", "1234567", "0" }),
			"departmentalInfo.docDate109"},
		{"declaration dated 00", di(func(d *DepartmentalInfo) { d.ReasonCode106, d.DocNumber108, d.DocDate109 = "ПВ", "1234567", "00" }),
			"departmentalInfo.docDate109"},
		{"declaration date of 9 characters", di(func(d *DepartmentalInfo) {
			d.ReasonCode106, d.DocNumber108, d.DocDate109 = "ТБ", "1234567", "1.11.2026"
		}), "departmentalInfo.docDate109"},
		{"reason 00 with a date", di(func(d *DepartmentalInfo) { d.DocDate109 = "15.11.2026" }), "departmentalInfo.docDate109"},

		// The customs account marks a customs payment whatever the status.
		{"status 01 to the customs account", di(func(d *DepartmentalInfo) { d.DrawerStatus101 = "01" }), ""},
		{"status 01 to the customs account with period 0", di(func(d *DepartmentalInfo) {
			d.DrawerStatus101, d.TaxPeriod107 = "01", "0"
		}), "departmentalInfo.taxPeriod107"},
		// Neither a customs status nor the customs account: the tax rules.
		{"status 01 with tax fields to another administrator", func(p *Payment) {
			p.PayeeAccount, p.PayeeKPP = "03100643000000017300", "770201001"
			p.DepartmentalInfo.DrawerStatus101, p.DepartmentalInfo.KBK = "01", "32111301031010000130"
			p.DepartmentalInfo.ReasonCode106, p.DepartmentalInfo.TaxPeriod107 = "0", "0"
		}, ""},
		// The rule set does not change with order 58n (2026-04-01).
		{"valid on 2026-03-31 (107n)", func(p *Payment) { p.Date = "2026-03-31" }, ""},
		{"valid on 2026-04-01 (58n)", func(p *Payment) { p.Date = "2026-04-01" }, ""},
		{"period 0 on 2026-03-31 (107n)", func(p *Payment) { p.Date, p.DepartmentalInfo.TaxPeriod107 = "2026-03-31", "0" },
			"departmentalInfo.taxPeriod107"},
		{"period 0 on 2026-04-01 (58n)", func(p *Payment) { p.Date, p.DepartmentalInfo.TaxPeriod107 = "2026-04-01", "0" },
			"departmentalInfo.taxPeriod107"},
		{"status 06 in 2025", func(p *Payment) { p.Date, p.DepartmentalInfo.TaxPeriod107 = "2025-06-02", "ГД.00.2024" },
			"departmentalInfo.taxPeriod107"},
	} {
		p := customsPayment()
		tc.mutate(&p)
		if f, why := CheckBudgetRules(&p); f != tc.field || (f != "" && why == "") {
			t.Errorf("%s: got %q (%s), want %q", tc.name, f, why, tc.field)
		}
	}
}

// Status 34 joins the FTS set on 2026-03-30 (§5.8): from that day a payment
// of status 34 is a customs payment held to the customs rules; the day
// before, 34 is no status at all, a malformed departmentalInfo.
func TestCustomsStatus34(t *testing.T) {
	to03100 := func(p *Payment) {
		p.PayeeAccount, p.PayeeKPP = "03100643000000017300", "770201001"
		p.DepartmentalInfo.TaxPeriod107 = "0"
	}
	for _, tc := range []struct {
		name, date string
		mutate     func(*Payment)
		field      string
	}{
		{"customs payment", "2026-03-30", func(*Payment) {}, ""},
		{"period 0", "2026-03-30", func(p *Payment) { p.DepartmentalInfo.TaxPeriod107 = "0" }, "departmentalInfo.taxPeriod107"},
		// The day before, 34 is not of the FTS set, so the document is no
		// customs payment and its fields pass the customs rules unchecked.
		{"other treasury account the day before", "2026-03-29", to03100, ""},
		{"other treasury account", "2026-03-30", to03100, "payeeAccount"},
	} {
		p := customsPayment()
		p.Date, p.DepartmentalInfo.DrawerStatus101 = tc.date, "34"
		tc.mutate(&p)
		if f, why := CheckBudgetRules(&p); f != tc.field {
			t.Errorf("%s on %s: got %q (%s), want %q", tc.name, tc.date, f, why, tc.field)
		}
	}
	if s := CustomsStatuses(time.Date(2026, 3, 29, 0, 0, 0, 0, time.UTC)); slices.Contains(s, "34") || !slices.Contains(s, "06") {
		t.Errorf("FTS set on 2026-03-29: %v", s)
	}
	if s := CustomsStatuses(time.Date(2026, 3, 30, 0, 0, 0, 0, time.UTC)); !slices.Contains(s, "34") || len(s) != 6 {
		t.Errorf("FTS set on 2026-03-30: %v", s)
	}

	// Through InspectPayment: the day before, status 34 is the spec's
	// malformed block (CHECKERROR in either mode); from 2026-03-30 a
	// customs payment that keeps the rules passes and one that breaks them
	// is a failed logical control, CHECKERROR by default, 400 on reject.
	today := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, date, period string
		dept, check        string
	}{
		{"34 the day before", "2026-03-29", "10702000", "departmentalInfo.drawerStatus101", ""},
		{"34 from 2026-03-30", "2026-03-30", "10702000", "", ""},
		{"34 with period 0", "2026-03-30", "0", "", "departmentalInfo.taxPeriod107"},
	} {
		p := customsPayment()
		p.Date, p.DepartmentalInfo.DrawerStatus101, p.DepartmentalInfo.TaxPeriod107 = tc.date, "34", tc.period
		f := InspectPayment(&p, today, true)
		fields, _ := f.Checks()
		if f.deptField != tc.dept || (tc.check == "") != (len(fields) == 0) || (tc.check != "" && !slices.Contains(fields, tc.check)) {
			t.Fatalf("%s: dept %q checks %v, want %q %q", tc.name, f.deptField, fields, tc.dept, tc.check)
		}
		if err := f.Err(ChecksCheckError); err != nil {
			t.Fatalf("%s: checkerror mode %v", tc.name, err)
		}
		if name := tc.dept + tc.check; name != "" && !strings.Contains(f.CheckError(), "Ошибка в поле "+name+": ") {
			t.Fatalf("%s: comment %q", tc.name, f.CheckError())
		}
		var e *Error
		if err := f.Err(ChecksReject); (err != nil) != (tc.check != "") || err != nil && (!errors.As(err, &e) || e.Kind != KindValidation) {
			t.Fatalf("%s: reject mode %v", tc.name, err)
		}
	}
}

// A draft from a budget invoice is held to the customs rules too: they
// concern the payee and the block, not the payer the signer adds later.
func TestCheckBudgetDraftRulesCustoms(t *testing.T) {
	p := customsPayment()
	p.PayerINN, p.PayerKPP = "", ""
	if f, why := CheckBudgetDraftRules(&p); f != "" {
		t.Fatalf("valid customs draft: %q (%s)", f, why)
	}
	p.DepartmentalInfo.ReasonCode106 = "0"
	if f, _ := CheckBudgetDraftRules(&p); f != "departmentalInfo.reasonCode106" {
		t.Fatalf("customs draft with reason 0: %q", f)
	}
}

// Fields 108 and 110 of other budget payments (§5.8): status 24 without INN
// and UIN names an identity document, status 33 leaves 108 empty, the ЕНП
// carries 0, and no budget payment fills field 110.
func TestCheckBudgetRulesFields108And110(t *testing.T) {
	other := func(p *Payment) {
		p.PayeeINN, p.PayeeKPP, p.PayeeAccount = "7702807750", "770201001", "03100643000000017300"
		p.DepartmentalInfo = &DepartmentalInfo{DrawerStatus101: "24", KBK: "32111301031010000130", OKTMO: "45328000",
			ReasonCode106: "0", TaxPeriod107: "0", DocNumber108: "014510123456", DocDate109: "0", UIP: "0"}
		p.PayerINN, p.PayerKPP = "0", "0"
	}
	with := func(f func(*Payment)) func(*Payment) { return func(p *Payment) { other(p); f(p) } }
	for _, tc := range []struct {
		name   string
		mutate func(*Payment)
		field  string
	}{
		{"24: passport (01) and number", other, ""},
		{"24: type 22 and number", with(func(p *Payment) { p.DepartmentalInfo.DocNumber108 = "22123456" }), ""},
		{"24: type 30 and number", with(func(p *Payment) { p.DepartmentalInfo.DocNumber108 = "30AB123456" }), ""},
		{"24: unknown type 15", with(func(p *Payment) { p.DepartmentalInfo.DocNumber108 = "154510123456" }), "departmentalInfo.docNumber108"},
		{"24: unknown type 00", with(func(p *Payment) { p.DepartmentalInfo.DocNumber108 = "004510123456" }), "departmentalInfo.docNumber108"},
		{"24: type without a number", with(func(p *Payment) { p.DepartmentalInfo.DocNumber108 = "01" }), "departmentalInfo.docNumber108"},
		{"24: 108 is 0", with(func(p *Payment) { p.DepartmentalInfo.DocNumber108 = "0" }), "departmentalInfo.docNumber108"},
		{"24: UIN instead", with(func(p *Payment) {
			p.DepartmentalInfo.DocNumber108, p.DepartmentalInfo.UIP = "0", "18210102010011000116"
		}), ""},
		{"24: payer INN instead", with(func(p *Payment) { p.DepartmentalInfo.DocNumber108, p.PayerINN = "0", "500100732259" }), ""},
		{"33: 108 empty", with(func(p *Payment) {
			p.DepartmentalInfo.DrawerStatus101, p.DepartmentalInfo.DocNumber108, p.DepartmentalInfo.UIP = "33", "", "18210102010011000116"
		}), ""},
		{"33: 108 filled", with(func(p *Payment) {
			p.DepartmentalInfo.DrawerStatus101, p.DepartmentalInfo.DocNumber108, p.DepartmentalInfo.UIP = "33", "123", "18210102010011000116"
		}), "departmentalInfo.docNumber108"},
		{"110 empty", with(func(p *Payment) { p.DepartmentalInfo.PaymentKind110 = "" }), ""},
		{"110 is 0", with(func(p *Payment) { p.DepartmentalInfo.PaymentKind110 = "0" }), ""},
		{"110 is 1", with(func(p *Payment) { p.DepartmentalInfo.PaymentKind110 = "1" }), "departmentalInfo.paymentKind110"},
		{"110 is 1 on an ordinary payee", func(p *Payment) { p.DepartmentalInfo = &DepartmentalInfo{PaymentKind110: "1"} }, ""},
	} {
		p := validPayment()
		tc.mutate(&p)
		if f, why := CheckBudgetRules(&p); f != tc.field || (f != "" && why == "") {
			t.Errorf("%s: got %q (%s), want %q", tc.name, f, why, tc.field)
		}
	}
	enp := func(doc string) Payment {
		p := validPayment()
		p.PayeeAccount, p.PayeeBankBIC, p.PayeeBankCorrAccount = ENPPayeeAccount, ENPPayeeBIC, ENPPayeeCorrAcc
		p.PayeeINN, p.PayeeKPP, p.PayerKPP = ENPPayeeINN, "770701001", "0"
		p.DepartmentalInfo = &DepartmentalInfo{DrawerStatus101: "01", KBK: ENPKBK, OKTMO: "0", ReasonCode106: "0",
			TaxPeriod107: "0", DocNumber108: doc, DocDate109: "0", UIP: "0"}
		return p
	}
	for doc, want := range map[string]string{"0": "", "": "", "123": "departmentalInfo.docNumber108", "00": "departmentalInfo.docNumber108"} {
		p := enp(doc)
		if f, why := CheckBudgetRules(&p); f != want {
			t.Errorf("ЕНП with 108 %q: got %q (%s), want %q", doc, f, why, want)
		}
	}
}
