package banking

import (
	"regexp"
	"slices"
	"time"
	"unicode/utf8"
)

// Customs payments (reference §5.8): the budget payments the customs service
// (FTS) administers, whose fields 105–109 follow the customs rules rather
// than the tax service's. §5.8 records no change to these rules with order
// 58n (2026-04-01); only the drawer-status set grows by 34 from 2026-03-30,
// which DrawerStatuses already dates, so the rules here take their one
// date boundary from it.

// The customs service's payee requisites (§5.8's requisites table): since
// 2021 every customs payment is credited to the single account of the
// interregional treasury division for the FTS in Moscow, hence one OKTMO.
const (
	CustomsPayeeAccount = "03100643000000019502"
	CustomsPayeeKPP     = "773001001"
	CustomsOKTMO        = "45328000"
)

var (
	// customsStatusesBase are the drawer statuses of the FTS set (§5.8
	// field 101): foreign-trade participants (06 legal entity, 16
	// individual, 17 sole proprietor, 30 foreign person) and the recipient
	// of an international postal item (28).
	customsStatusesBase = []string{"06", "16", "17", "28", "30"}

	// customsReasonCodes are the field-106 values of a customs payment;
	// `00` stands for "none of the others", so the field is never left
	// empty or `0` there, unlike the single tax payment's.
	customsReasonCodes = []string{"ПК", "КЭ", "УВ", "ИЛ", "ПБ", "ТГ", "ТБ", "ТД", "ПВ", "ИН", "00"}

	// customsShortDocReasons are the reasons whose basis document (a goods
	// declaration, a notice, a guarantee, a customs receipt…) is named in
	// field 108 by at most 7 characters.
	customsShortDocReasons = []string{"ПК", "УВ", "ТГ", "ТБ", "ТД", "ПВ"}

	reCustomsCode = regexp.MustCompile(`^[0-9]{8}$`)
	reDocDate10   = regexp.MustCompile(`^[0-9]{2}\.[0-9]{2}\.[0-9]{4}$`)
)

// CustomsStatuses returns the drawer statuses of the FTS set on date: `06 16
// 17 28 30`, and `34` from the day DrawerStatuses admits it (2026-03-30).
func CustomsStatuses(date time.Time) []string {
	if slices.Contains(DrawerStatuses(date), "34") {
		return append(slices.Clone(customsStatusesBase), "34")
	}
	return customsStatusesBase
}

// isCustomsPayment reports whether a budget payment (CheckBudgetRules,
// CheckBudgetDraftRules) goes to the customs service. §5.8 marks a customs
// payment two ways, and either is enough: a drawer status of the FTS set on
// the document's date (the payer declares itself a customs payer; these
// statuses serve no other administrator), or the customs payee account of
// the requisites table (the money reaches the FTS, which reads fields
// 106–109 by its rules whatever status the payer chose). The customs OKTMO
// alone does not mark one: it is a Moscow territory code, which other
// Moscow budget payments carry too. A single tax payment (its KBK) is never
// a customs payment: CheckBudgetRules holds it to the tax service's
// requisites before it looks here. An unparseable date takes the earliest
// set, as CheckDepartmentalInfo's status check does; the date's own format
// error answers it.
func isCustomsPayment(d *Payment) bool {
	if d.PayeeAccount == CustomsPayeeAccount {
		return true
	}
	di := d.DepartmentalInfo
	if di == nil || di.DrawerStatus101 == "" {
		return false
	}
	date, _ := ParseDate(d.Date)
	return slices.Contains(CustomsStatuses(date), di.DrawerStatus101)
}

// checkCustomsRules names the first field of a customs payment that breaks
// the customs rules of §5.8, or "" when it keeps them: the customs payee
// requisites and OKTMO, field 106 from the customs set, field 107 the
// 8-digit code of the customs office, field 108 by the reason (`0`/`00`
// for reason 00, at most 7 characters for a declaration, notice,
// guarantee or receipt) and field 109 a 10-character date. The caller has
// made sure the document has a departmentalInfo with a drawer status.
//
// Field 109's `0`/`00`: §5.8 allows them in general and narrows customs
// payments to exactly 10 characters; reason 00 names no basis document
// (field 108 `0`/`00`), which has no date either, so there 109 is `0` or
// `00` as well, and every other reason names a document and its date.
func checkCustomsRules(d *Payment) (field, why string) {
	const pre = "departmentalInfo."
	di := d.DepartmentalInfo
	if d.PayeeAccount != CustomsPayeeAccount {
		return "payeeAccount", "для таможенного платежа счёт получателя " + CustomsPayeeAccount
	}
	if d.PayeeKPP != CustomsPayeeKPP {
		return "payeeKpp", "для таможенного платежа КПП получателя " + CustomsPayeeKPP
	}
	zeroOr00 := func(v string) bool { return v == "0" || v == "00" }
	reason := di.ReasonCode106
	switch {
	case di.OKTMO != CustomsOKTMO:
		return pre + "oktmo", "для таможенного платежа ОКТМО " + CustomsOKTMO
	case !slices.Contains(customsReasonCodes, reason):
		return pre + "reasonCode106", "в таможенном платеже основание платежа: ПК, КЭ, УВ, ИЛ, ПБ, ТГ, ТБ, ТД, ПВ, ИН или 00"
	case !reCustomsCode.MatchString(di.TaxPeriod107):
		return pre + "taxPeriod107", "в таможенном платеже поле 107: код таможенного органа, 8 цифр"
	case reason == "00" && !zeroOr00(di.DocNumber108):
		return pre + "docNumber108", "в таможенном платеже с основанием 00 поле 108: 0 или 00"
	case slices.Contains(customsShortDocReasons, reason) && (di.DocNumber108 == "" || utf8.RuneCountInString(di.DocNumber108) > 7):
		return pre + "docNumber108", "в таможенном платеже с основанием " + reason + " номер документа: от 1 до 7 символов"
	case reason == "00" && !zeroOr00(di.DocDate109):
		return pre + "docDate109", "в таможенном платеже с основанием 00 поле 109: 0 или 00"
	case reason != "00" && !reDocDate10.MatchString(di.DocDate109):
		return pre + "docDate109", "в таможенном платеже дата документа: 10 символов ДД.ММ.ГГГГ"
	}
	return "", ""
}
