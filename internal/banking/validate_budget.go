package banking

import (
	"regexp"
	"slices"
	"strings"
	"time"
)

// Budget-field rules (reference §5.8). The sets are date-versioned by the
// document date: the drawer-status list changed in 2024 and in 2026.
var (
	drawerStatusPre2024 = []string{"01", "02", "06", "08", "13", "16", "17", "24", "28", "30", "31"}
	drawerStatus2024    = []string{"01", "06", "08", "13", "16", "17", "24", "28", "30", "31", "33"}
	drawerStatus2026    = append(slices.Clone(drawerStatus2024), "34")

	reasonCodes = []string{"0", "00", "ПК", "КЭ", "УВ", "ИЛ", "ПБ", "ТГ", "ТБ", "ТД", "ПВ", "ИН",
		"ТП", "ЗД", "БФ", "ТР", "РС", "ОТ", "РТ", "ПР", "АП", "АР", "ТЛ", "ЗТ",
		"ДЕ", "ПО", "КТ", "ИД", "ИП", "ТУ", "БД", "КП", "ВУ", "ДТ", "ПД", "СТ"}

	reTaxPeriod  = regexp.MustCompile(`^(0|[0-9]{8}|(МС\.(0[1-9]|1[0-2])|КВ\.0[1-4]|ПЛ\.0[1-2]|ГД\.00|(0[1-9]|[12][0-9]|3[01])\.(0[1-9]|1[0-2]))\.[0-9]{4})$`)
	reDocDate109 = regexp.MustCompile(`^(0|00|[0-9]{2}\.[0-9]{2}\.[0-9]{4})$`)
	rePayKind110 = regexp.MustCompile(`^[0-9]{1,2}$`)
)

// DrawerStatuses returns the allowed field-101 values on date.
func DrawerStatuses(date time.Time) []string {
	switch {
	case date.Before(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)):
		return drawerStatusPre2024
	case date.Before(time.Date(2026, 3, 30, 0, 0, 0, 0, time.UTC)):
		return drawerStatus2024
	}
	return drawerStatus2026
}

// CheckDepartmentalInfo returns the name of the first malformed
// departmentalInfo member and why, or "" when the block is acceptable. The
// sandbox's four accepted shapes (all members; all but paymentKind110; only
// paymentKind110; null) pass; a null member is not checked. A malformed block
// gives the document CHECKERROR with this in bankComment (reference §4).
// Only the members' shapes are checked here: the UIN check digit and the
// rules relating the block to the payee are checks (InspectPayment,
// CheckBudgetRules) whose failures the ChecksumMode places.
func CheckDepartmentalInfo(di *DepartmentalInfo, date time.Time) (field, why string) {
	if di == nil {
		return "", ""
	}
	const pre = "departmentalInfo."
	if di.DrawerStatus101 != "" && !slices.Contains(DrawerStatuses(date), di.DrawerStatus101) {
		return pre + "drawerStatus101", "недопустимый статус составителя"
	}
	if di.KBK != "" && di.KBK != "0" && (len(di.KBK) != 20 || !allDigits(di.KBK) || allZero(di.KBK)) {
		return pre + "kbk", "КБК: 20 цифр, не все нули"
	}
	if di.OKTMO != "" && di.OKTMO != "0" && ((len(di.OKTMO) != 8 && len(di.OKTMO) != 11) || !allDigits(di.OKTMO) || allZero(di.OKTMO)) {
		return pre + "oktmo", "ОКТМО: 8 или 11 цифр, не все нули"
	}
	if di.ReasonCode106 != "" && !slices.Contains(reasonCodes, di.ReasonCode106) {
		return pre + "reasonCode106", "основание платежа: 0 или двухбуквенный код"
	}
	if di.TaxPeriod107 != "" && (!reTaxPeriod.MatchString(di.TaxPeriod107) || !dottedDateOK(di.TaxPeriod107)) {
		return pre + "taxPeriod107", "налоговый период: 0, МС.ММ.ГГГГ, КВ.0N.ГГГГ, ПЛ.0N.ГГГГ, ГД.00.ГГГГ, ДД.ММ.ГГГГ или 8 цифр"
	}
	if n := len([]rune(di.DocNumber108)); n > 15 {
		return pre + "docNumber108", "номер документа-основания: не более 15 символов"
	}
	if di.DocDate109 != "" && (!reDocDate109.MatchString(di.DocDate109) || !dottedDateOK(di.DocDate109)) {
		return pre + "docDate109", "дата документа-основания: 0, 00 или ДД.ММ.ГГГГ"
	}
	if di.PaymentKind110 != "" && !rePayKind110.MatchString(di.PaymentKind110) {
		return pre + "paymentKind110", "тип платежа: не более 2 цифр"
	}
	if di.UIP != "" && !uinFormatOK(di.UIP) {
		return pre + "uip", "УИН: 0 или 4, 20 или 25 цифр, не все нули"
	}
	return "", ""
}

// dottedDate reports whether a field of shape NN.NN.NNNN is meant as a
// date DD.MM.YYYY: field 107's periods (МС., КВ., …) and 8-digit customs
// codes, and field 109's 0 and 00, are not.
func dottedDate(s string) bool {
	return len(s) == 10 && s[2] == '.' && s[5] == '.' && allDigits(s[:2]) && allDigits(s[3:5]) && allDigits(s[6:])
}

// dottedDateOK reports whether a value of fields 107 or 109 that is a date
// DD.MM.YYYY (dottedDate) names a day of the calendar (§5.8); values that
// are not dates pass, left to their own patterns. The patterns alone took
// 99.99.9999 as a date of field 109 and 29.02.2026 as a tax period, which
// no tax or customs authority can match to a document.
func dottedDateOK(s string) bool {
	if !dottedDate(s) {
		return true
	}
	_, ok := ParseDate(s[6:] + "-" + s[3:5] + "-" + s[:2])
	return ok
}

// ENPKBK is the KBK of the single tax payment (ЕНП, §5.8).
const ENPKBK = "18201061201010000510"

// ENPPayeeINN is the INN of the ЕНП payee, Казначейство России (ФНС России).
const ENPPayeeINN = "7727406020"

// The ЕНП payee's requisites (§5.8): the tax service's treasury account at
// the Tula division of the Bank of Russia. Its KPP changed on 2025-12-05.
const (
	ENPPayeeAccount = "03100643000000018500"
	ENPPayeeBIC     = "017003983"
	ENPPayeeCorrAcc = "40102810445370000059"
	enpPayeeKPPOld  = "770801001"
	enpPayeeKPPNew  = "770701001"
)

// enpPayeeKPPStart is the day the ЕНП payee's KPP changed.
var enpPayeeKPPStart = time.Date(2025, 12, 5, 0, 0, 0, 0, time.UTC)

// ENPPayeeKPP is the ЕНП payee's KPP for a document dated date.
func ENPPayeeKPP(date time.Time) string {
	if date.Before(enpPayeeKPPStart) {
		return enpPayeeKPPOld
	}
	return enpPayeeKPPNew
}

// checkENPPayee names the first payee requisite of a single tax payment
// that is not the tax service's: a ЕНП sent elsewhere is not credited to
// the payer's single tax account. An unparseable date leaves the KPP to
// the date's own format error.
func checkENPPayee(d *Payment) (field, why string) {
	kpp := ""
	if date, ok := ParseDate(d.Date); ok {
		kpp = ENPPayeeKPP(date)
	}
	for _, f := range []struct{ name, got, want string }{
		{"payeeInn", d.PayeeINN, ENPPayeeINN},
		{"payeeKpp", d.PayeeKPP, kpp},
		{"payeeAccount", d.PayeeAccount, ENPPayeeAccount},
		{"payeeBankBic", d.PayeeBankBIC, ENPPayeeBIC},
		{"payeeBankCorrAccount", d.PayeeBankCorrAccount, ENPPayeeCorrAcc},
	} {
		if f.want != "" && f.got != f.want && !(f.name == "payeeBankCorrAccount" && f.got == "") {
			return f.name, "для единого налогового платежа значение " + f.want
		}
	}
	return "", ""
}

// toTaxService reports whether a budget payment goes to the tax service:
// its KBK names the FNS as administrator (`182…`) or it pays the ЕНП payee.
func toTaxService(d *Payment) bool {
	return d.PayeeINN == ENPPayeeINN || d.DepartmentalInfo != nil && strings.HasPrefix(d.DepartmentalInfo.KBK, "182")
}

// identityDocTypes are the codes of the identity documents with which a
// payer of status 24 without INN and UIN fills field 108 (§5.8).
var identityDocTypes = []string{"01", "02", "03", "04", "05", "06", "07", "08", "09", "10", "11", "12", "13", "14",
	"22", "24", "25", "26", "28", "29", "30"}

// identityDocNumber reports whether a field-108 value is a document-type
// code followed by the document's number.
func identityDocNumber(v string) bool {
	return len(v) > 2 && slices.Contains(identityDocTypes, v[:2])
}

var treasuryStatuses = []string{"01", "02", "04", "06", "07", "13", "16", "17", "28", "30"}

// oktmoOptionalAccounts are the payee accounts of budget payments that may
// leave OKTMO as `0` (§5.8); every other budget payee needs it.
var oktmoOptionalAccounts = []string{"03212", "03222", "03232", "03242", "03252", "03262", "03272", "03214", "03224",
	"03234", "03244", "40503", "40603", "40703"}

// IsBudgetPayment reports whether a document pays into the budget system:
// its payee account is a treasury account (`03…`, since 2021) or its payee
// bank account is the treasury's single account (ЕКС, `40102…`). The §5.8
// rules apply to these only: the spec's sandbox accepts a filled
// departmentalInfo on a payment to an ordinary bank account (reference §4),
// so the block alone does not make a payment a budget payment.
func IsBudgetPayment(d *Payment) bool {
	return strings.HasPrefix(d.PayeeAccount, "03") || strings.HasPrefix(d.PayeeBankCorrAccount, "40102")
}

// IsENPPayment reports whether a document is a single tax payment (ЕНП,
// §5.8): a budget payment (IsBudgetPayment) under the ЕНП's KBK.
func IsENPPayment(d *Payment) bool {
	return IsBudgetPayment(d) && d.DepartmentalInfo != nil && d.DepartmentalInfo.KBK == ENPKBK
}

// CheckBudgetRules applies the logical controls of §5.8 that relate the
// budget fields to the rest of a budget payment (IsBudgetPayment): field 101
// present, account routing by drawer status, the UIN of statuses 31 and 33,
// no tax period (field 107) from statuses 01 and 13 to the tax service,
// how a payer without INN is identified (status 13 to the tax service by
// the UIN, status 24 by the UIN or a document in field 108), field 110 left
// empty, OKTMO, the ЕНП requisites, and a customs payment's requisites and
// fields 105–109 (checkCustomsRules). Like CheckDepartmentalInfo it names
// the first offending field for a CHECKERROR bankComment; other payments
// pass.
func CheckBudgetRules(d *Payment) (field, why string) {
	if !IsBudgetPayment(d) {
		return "", ""
	}
	return checkBudgetRules(d, true)
}

// CheckBudgetDraftRules applies CheckBudgetRules to a draft from a budget
// invoice (/from-invoice-budget, reference §4.1). Its kind says it pays into
// the budget, so the rules apply whatever its payee account, and a draft
// sent to an ordinary account is caught by the routing rule. The rules on
// how the payer is identified (status 13 or 24 without the payer's INN) and
// on the payer's KPP are left out: a draft names no payer until its signer
// completes it in the bank's interface.
//
// Unlike a payment order, whose payee account alone makes it a budget
// payment, such a draft pays into the budget by its kind, so it must name a
// drawer status (field 101) whatever its payee, and its payee must be one
// IsBudgetPayment knows: a departmentalInfo of nulls, or a status whose
// routing rule leaves the payee open (08, 24, 33), sent a "budget" draft to
// an ordinary account unchallenged.
func CheckBudgetDraftRules(d *Payment) (field, why string) {
	if di := d.DepartmentalInfo; di == nil || di.DrawerStatus101 == "" {
		return "departmentalInfo.drawerStatus101", "для платежа в бюджет статус составителя обязателен"
	}
	if field, why := checkBudgetRules(d, false); field != "" {
		return field, why
	}
	if !IsBudgetPayment(d) {
		return "payeeAccount", "счёт получателя платежа в бюджет: казначейский (03…) или в банке с ЕКС (40102…)"
	}
	return "", ""
}

// checkBudgetRules is CheckBudgetRules on a budget payment; payerKnown says
// the document names its payer, so the payer's rules apply too.
func checkBudgetRules(d *Payment, payerKnown bool) (field, why string) {
	const pre = "departmentalInfo."
	di := d.DepartmentalInfo
	if di == nil || di.DrawerStatus101 == "" {
		if strings.HasPrefix(d.PayeeAccount, "03100") {
			return pre + "drawerStatus101", "для платежа в бюджет на счёт 03100 статус составителя обязателен"
		}
		return "", ""
	}
	st := di.DrawerStatus101
	// Without the payer's INN (absent or `0`) the payer is identified by the
	// UIN or, for status 24, by an identity document in field 108.
	noINN, noUIN := d.PayerINN == "" || d.PayerINN == "0", di.UIP == "" || di.UIP == "0"
	switch {
	case slices.Contains(treasuryStatuses, st) && !strings.HasPrefix(d.PayeeAccount, "03100"):
		return "payeeAccount", "при статусе составителя " + st + " счёт получателя начинается с 03100"
	case st == "31" && !strings.HasPrefix(d.PayeeAccount, "03212"):
		return "payeeAccount", "при статусе составителя 31 счёт получателя начинается с 03212"
	case (st == "31" || st == "33") && (di.UIP == "" || di.UIP == "0"):
		return pre + "uip", "для статуса составителя " + st + " УИН обязателен"
	case st == "33" && !(len(di.UIP) == 20 || len(di.UIP) == 25):
		return pre + "uip", "при статусе составителя 33 нужен УИН из 20 или 25 цифр"
	case st == "33" && di.DocNumber108 != "":
		return pre + "docNumber108", "при статусе составителя 33 поле 108 не заполняется"
	case (st == "01" || st == "13") && toTaxService(d) && di.TaxPeriod107 != "" && di.TaxPeriod107 != "0":
		// Since the single tax account (2023) the tax service credits an
		// organisation's or a person's payment by the account, not by a
		// period the payment names, so field 107 is left 0 (vitya: FNS
		// statuses 01 and 13 take no tax period).
		return pre + "taxPeriod107", "при статусе составителя " + st + " в налоговый орган налоговый период 0"
	case payerKnown && st == "13" && noINN && noUIN && toTaxService(d):
		return pre + "uip", "для статуса составителя 13 без ИНН плательщика в налоговый орган УИН обязателен"
	case payerKnown && st == "24" && noINN && noUIN && !identityDocNumber(di.DocNumber108):
		return pre + "docNumber108", "при статусе составителя 24 без ИНН и УИН поле 108: код вида документа (2 цифры) и его номер"
	case di.PaymentKind110 != "" && di.PaymentKind110 != "0":
		// Field 110 has not been filled since 2015 (§5.8), years before
		// any document the service accepts (a payment order lives ten
		// days), so the rule needs no date. Its shape, up to two digits,
		// stays CheckDepartmentalInfo's: the sandbox accepts a block with
		// only paymentKind110 on an ordinary payee (reference §4).
		return pre + "paymentKind110", "в платеже в бюджет поле 110 не заполняется: пусто или 0"
	}
	if strings.HasPrefix(d.PayeeAccount, "03100") && (di.KBK == "" || di.KBK == "0") {
		// Tax and customs revenue (accounts 03100) is credited by its KBK:
		// the "0" that §4 allows in field 104 is for some non-tax payments
		// to other treasury accounts, and without it the treasury cannot
		// tell what the money pays.
		return pre + "kbk", "для платежа в бюджет на счёт 03100 КБК обязателен: 20 цифр, не все нули"
	}
	if payerKnown {
		if field, why := checkBudgetPayerKPP(d, di.KBK == ENPKBK); field != "" {
			return field, why
		}
	}
	if di.KBK == ENPKBK {
		if field, why := checkENPPayee(d); field != "" {
			return field, why
		}
		for _, f := range []struct{ name, v string }{{"oktmo", di.OKTMO}, {"reasonCode106", di.ReasonCode106},
			{"taxPeriod107", di.TaxPeriod107}, {"docNumber108", di.DocNumber108}, {"docDate109", di.DocDate109}} {
			if f.v != "" && f.v != "0" {
				return pre + f.name, "для единого налогового платежа значение 0"
			}
		}
		return "", ""
	}
	if isCustomsPayment(d) {
		return checkCustomsRules(d)
	}
	if (di.OKTMO == "" || di.OKTMO == "0") && !slices.ContainsFunc(oktmoOptionalAccounts, func(p string) bool { return strings.HasPrefix(d.PayeeAccount, p) }) {
		return pre + "oktmo", "для платежа в бюджет на счёт " + d.PayeeAccount[:min(5, len(d.PayeeAccount))] + " ОКТМО обязателен"
	}
	return "", ""
}

// payerKPP58nStart is the day Minfin order 58n's payer KPP rules take effect
// (§5.2), judged by the document's date like every versioned budget rule.
var payerKPP58nStart = time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)

// checkBudgetPayerKPP applies 58n's payer KPP rules to a budget payment of a
// legal entity (a 10-digit payer INN) dated from 2026-04-01: a single tax
// payment carries KPP `0`, because the tax service credits it to the
// organisation's single tax account rather than to one of its branches,
// while every other budget payment names the real KPP of the unit that pays.
// Foreign organisations (INN 9909…) are exempt from the first rule: those
// with several branches keep their KPP, and the payment alone cannot tell
// how many branches a foreign organisation has.
func checkBudgetPayerKPP(d *Payment, enp bool) (field, why string) {
	date, ok := ParseDate(d.Date)
	if !ok || date.Before(payerKPP58nStart) || len(d.PayerINN) != 10 {
		return "", ""
	}
	zero := d.PayerKPP == "" || d.PayerKPP == "0"
	switch {
	case enp && !zero && !strings.HasPrefix(d.PayerINN, "9909"):
		return "payerKpp", "с 01.04.2026 в едином налоговом платеже КПП плательщика 0"
	case !enp && zero:
		return "payerKpp", "с 01.04.2026 в платеже в бюджет организация указывает свой КПП"
	}
	return "", ""
}
