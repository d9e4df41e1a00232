package banking

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"partnerapi/internal/gost"
)

// problems collects failed checks as parallel fieldNames/checks lists for
// VALIDATION_FAULT (reference §13).
type problems struct{ fields, checks []string }

func (p *problems) add(field, check string) {
	p.fields = append(p.fields, field)
	p.checks = append(p.checks, check)
}

func (p *problems) err() error {
	if len(p.fields) == 0 {
		return nil
	}
	return &Error{Kind: KindValidation, Message: "Объект Payment не соответствует модели",
		FieldNames: p.fields, Checks: p.checks}
}

// ChecksumMode says where checksum and logical-control failures land
// (reference §13: CHECKERROR by default, switchable to 400).
type ChecksumMode string

const (
	// ChecksCheckError stores the document and answers 201 with CHECKERROR
	// and a bankComment naming each failed field and check.
	ChecksCheckError ChecksumMode = "checkerror"
	// ChecksReject answers 400 VALIDATION_FAULT with fieldNames and checks.
	ChecksReject ChecksumMode = "reject"
)

// ParseChecksumMode reads a --banking-checksum-failures value; empty is
// the default, ChecksCheckError.
func ParseChecksumMode(s string) (ChecksumMode, error) {
	switch m := ChecksumMode(s); m {
	case "":
		return ChecksCheckError, nil
	case ChecksCheckError, ChecksReject:
		return m, nil
	}
	return "", fmt.Errorf("checksum failures must be %s or %s, got %q", ChecksCheckError, ChecksReject, s)
}

// Findings is what validation found in a document, sorted by where each
// failure lands (reference §13): format failures are always a 400; a
// malformed departmentalInfo is always CHECKERROR (the spec's sandbox);
// failed check digits and logical controls go where the ChecksumMode says.
type Findings struct {
	format problems
	// deptField/deptWhy: the first malformed departmentalInfo member.
	deptField, deptWhy string
	checks             problems
}

// Err is the 400 the findings call for under mode, nil when the document
// is to be stored.
func (f *Findings) Err(mode ChecksumMode) error {
	if mode != ChecksReject || len(f.format.fields) > 0 {
		return f.format.err()
	}
	return f.checks.err()
}

// CheckError is the bankComment of a stored document that fails logical
// control ("" when it passes): each failed field and check in turn.
func (f *Findings) CheckError() string {
	var parts []string
	if f.deptField != "" {
		parts = append(parts, "Ошибка в поле "+f.deptField+": "+f.deptWhy)
	}
	for i, field := range f.checks.fields {
		parts = append(parts, "Ошибка в поле "+field+": "+f.checks.checks[i])
	}
	return strings.Join(parts, "; ")
}

// failed reports whether any check digit or logical control failed (the
// malformed departmentalInfo of the spec's sandbox counts as one).
func (f *Findings) failed() bool { return f.deptField != "" || len(f.checks.fields) > 0 }

// Checks lists the failed check digits and logical controls as parallel
// field and check lists.
func (f *Findings) Checks() (fields, checks []string) { return f.checks.fields, f.checks.checks }

var (
	deliveryKind = []string{"электронно", "срочно", "0"}
	urgencyCodes = []string{"INTERNAL", "INTERTAL", "INTERNAL_NOTIF", "OFFHOURS", "BESP", "NORMAL"} // SDK misspelling accepted (§15 #9)
	vatTypes     = []string{"INCLUDED", "ONTOP", "NO_VAT", "MANUAL"}
	// invoiceVATTypes are the VAT types of a draft from an invoice.
	invoiceVATTypes = []string{"INCLUDED", "NO_VAT", "MANUAL"}
)

// ParseDate parses a document date (YYYY-MM-DD) as time.Parse with
// time.DateOnly does (a day past its month's end is refused), by hand:
// every document created parses two dates.
func ParseDate(s string) (time.Time, bool) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' || !digitsBetween(s[:4], 4, 4) ||
		!digitsBetween(s[5:7], 2, 2) || !digitsBetween(s[8:], 2, 2) {
		return time.Time{}, false
	}
	year := int(s[0]-'0')*1000 + int(s[1]-'0')*100 + int(s[2]-'0')*10 + int(s[3]-'0')
	month := time.Month(int(s[5]-'0')*10 + int(s[6]-'0'))
	day := int(s[8]-'0')*10 + int(s[9]-'0')
	if month < time.January || month > time.December || day < 1 {
		return time.Time{}, false
	}
	// Day 0 of the next month is the last day of this one.
	if day > time.Date(year, month+1, 0, 0, 0, 0, 0, time.UTC).Day() {
		return time.Time{}, false
	}
	return time.Date(year, month, day, 0, 0, 0, 0, time.UTC), true
}

// digitsBetween reports whether s is lo to hi ASCII digits (the regexp
// ^[0-9]{lo,hi}$ without the regexp engine).
func digitsBetween(s string, lo, hi int) bool {
	if len(s) < lo || len(s) > hi {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isLowerHex64 reports whether s is 64 lower-case hex digits.
func isLowerHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func required(p *problems, field, v string) bool {
	if v == "" {
		p.add(field, "обязательное поле не заполнено")
		return false
	}
	return true
}

func lenBetween(p *problems, field, v string, lo, hi int) {
	// A string of n bytes holds n/4 to n runes (an invalid byte counts as
	// one), so within both bounds by its length alone it needs no count:
	// decoding a Cyrillic purpose rune by rune was ~3% of a create.
	if len(v) <= hi && (len(v)+3)/4 >= lo {
		return
	}
	if n := utf8.RuneCountInString(v); n < lo || n > hi {
		p.add(field, "длина должна быть от "+itoa(lo)+" до "+itoa(hi)+" символов")
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// ValidatePayment runs the format and check-digit rules of reference §5 on
// a payment order (PAY_DOC_RU) and answers every failure as a 400, the
// strict reading. The service uses InspectPayment, which sorts failures by
// where they land.
func ValidatePayment(d *Payment, today time.Time) error {
	return InspectPayment(d, today, false).Err(ChecksReject)
}

// InspectPayment runs the rules of reference §5 on a payment order
// (PAY_DOC_RU). today is the bank's current date; budgetRules adds the §5.8
// logical controls of budget payments.
func InspectPayment(d *Payment, today time.Time, budgetRules bool) *Findings {
	f := &Findings{}
	inspectPayment(f, d, today, budgetRules)
	return f
}

// inspectPayment is InspectPayment into f, which it does not keep: a caller
// whose Findings does not outlive it (PaymentService's create) keeps it on
// its stack instead of allocating it for every document.
func inspectPayment(f *Findings, d *Payment, today time.Time, budgetRules bool) {
	p, c := &f.format, &f.checks
	validateCommon(p, d, today)
	if required(p, "operationCode", d.OperationCode) && !slices.Contains([]string{"01", "02", "06"}, d.OperationCode) {
		p.add("operationCode", "допустимые значения: 01, 02, 06")
	} else if d.OperationCode != "01" && d.OperationCode != "" && !IsBudgetPayment(d) {
		// Reference §4: the SDKs' pattern is ^01$, and only budget
		// payments may also carry 02 or 06. The wider form is accepted
		// (§15 #8) and its content checked against the payee: a logical
		// control of the document as a whole, so CHECKERROR by default and
		// a 400 under --banking-checksum-failures reject (§13).
		c.add("operationCode", "вид операции "+d.OperationCode+" допускается только в платеже в бюджет, в остальных 01")
	}
	if required(p, "priority", d.Priority) && !(len(d.Priority) == 1 && '1' <= d.Priority[0] && d.Priority[0] <= '5') {
		p.add("priority", "очерёдность платежа от 1 до 5")
	}
	// A single tax payment may leave its purpose empty (§5.6: the tax
	// service credits it by its KBK and the payer's INN); every other
	// payment order must state what it pays for.
	if d.Purpose != "" || !IsENPPayment(d) && required(p, "purpose", d.Purpose) {
		lenBetween(p, "purpose", d.Purpose, 1, 210)
		checkPurposeCharset(f, d.Purpose)
		if d.Purpose == "0" && !IsENPPayment(d) {
			// "0" says nothing, which only the ЕНП may (§5.6); the
			// SDKs' pattern lets it through, so it is a check.
			c.add("purpose", "назначение платежа 0 допускается только в едином налоговом платеже")
		}
	}
	if required(p, "payerName", d.PayerName) {
		checkName(f, "payerName", "наименование плательщика", d.PayerName)
	}
	if required(p, "payerInn", d.PayerINN) {
		checkINN(f, "payerInn", "ИНН плательщика", d.PayerINN)
	}
	if d.PayerKPP != "" && checkKPP(f, "payerKpp", d.PayerKPP) && len(d.PayerINN) == 12 && d.PayerKPP != "0" {
		c.add("payerKpp", "КПП не заполняется при 12-значном ИНН")
	}
	if required(p, "payerBankBic", d.PayerBankBIC) {
		checkBIC(f, "payerBankBic", d.PayerBankBIC)
	}
	if required(p, "payerAccount", d.PayerAccount) {
		checkAccount(f, "payerAccount", "счёт плательщика", d.PayerAccount, d.PayerBankBIC, false)
	}
	if required(p, "payerBankCorrAccount", d.PayerBankCorrAccount) {
		checkAccount(f, "payerBankCorrAccount", "корсчёт", d.PayerBankCorrAccount, d.PayerBankBIC, true)
	}
	validatePayee(f, d, true, IsBudgetPayment(d))
	if d.IncomeTypeCode != "" {
		// The SDKs' pattern ^[1-9]{1,6}$ is the field's form, and the
		// rules' 1..5 its content (reference §15 #8: accept the wider
		// form, validate content by the legal rules): a code the SDKs
		// send is a failed check, CHECKERROR by default, not a 400.
		switch {
		case !digitsBetween(d.IncomeTypeCode, 1, 6) || strings.Contains(d.IncomeTypeCode, "0"):
			p.add("incomeTypeCode", "код вида дохода: от 1 до 6 цифр 1–9")
		case len(d.IncomeTypeCode) != 1 || d.IncomeTypeCode[0] > '5':
			c.add("incomeTypeCode", "код вида дохода: 1..5")
		case !PayeeIsIndividual(d.PayeeAccount):
			c.add("incomeTypeCode", "код вида дохода указывается только для платежей физическим лицам")
		}
	}
	if d.VOCode != "" && !digitsBetween(d.VOCode, 5, 5) {
		p.add("voCode", "код вида валютной операции: 5 цифр")
	}
	checkVAT(f, d)
	inspectDepartmental(f, d, budgetRules)
}

// inspectDepartmental sorts the departmentalInfo findings: a malformed
// member is the spec's CHECKERROR, the UIN check digit and the budget rules
// are checks.
func inspectDepartmental(f *Findings, d *Payment, budgetRules bool) {
	date, _ := ParseDate(d.Date)
	f.deptField, f.deptWhy = CheckDepartmentalInfo(d.DepartmentalInfo, date)
	if di := d.DepartmentalInfo; f.deptField == "" && di != nil && !ValidUIN(di.UIP) && di.UIP != "" {
		f.checks.add("departmentalInfo.uip", "УИН: неверный контрольный разряд")
	}
	if budgetRules && f.deptField == "" {
		if field, why := CheckBudgetRules(d); field != "" {
			f.checks.add(field, why)
		}
	}
}

// checkINN sorts an INN failure: a wrong shape is a format error, a wrong
// check digit a failed check (§5.1).
func checkINN(f *Findings, field, what, v string) {
	switch {
	case !innFormatOK(v):
		f.format.add(field, what+": 0, 5, 10 или 12 цифр, не начинается с 00")
	case !ValidINN(v):
		f.checks.add(field, what+": неверное контрольное число")
	}
}

// The SDKs' patterns are the provider's model, what a 400 VALIDATION_FAULT
// refuses; where the rules ask more of a value the patterns let through,
// the bank's logical control finds it, a failed check (CHECKERROR by
// default), as reference §15 #8 decides ("accept the wider form, validate
// content by the legal rules") and §13 sorts failures.

// checkName sorts a payer's or payee's name: 1–254 characters is the
// SDKs' form; the payment-order rules allow 160 (fields 8 and 16, §4).
func checkName(f *Findings, field, what, v string) {
	if len(v) <= NameMaxRunes { // no more runes than bytes: nothing to find
		return
	}
	switch n := utf8.RuneCountInString(v); {
	case n > 254:
		f.format.add(field, "длина должна быть от 1 до 254 символов")
	case n > NameMaxRunes:
		f.checks.add(field, what+": не более "+itoa(NameMaxRunes)+" символов")
	}
}

// NameMaxRunes is the longest payer or payee name the payment-order rules
// allow (fields 8 and 16; reference §4: 254 in the SDKs, 160 by law).
const NameMaxRunes = 160

// checkKPP sorts a KPP failure: `0` or nine characters NNNNPPNNN (digits,
// PP digits or capital letters) is the form, the SDKs' ^([0-9]{9}|0)$
// widened by the letters the rules allow; a KPP opening with 00, which no
// tax office code has (§5.2), is a failed check. It reports whether the
// form was right.
func checkKPP(f *Findings, field, v string) bool {
	switch {
	case !kppFormatOK(v):
		f.format.add(field, "КПП: 0 или 9 символов NNNNPPNNN")
		return false
	case !ValidKPP(v):
		f.checks.add(field, "КПП не может начинаться с 00")
	}
	return true
}

// checkBIC sorts a BIC failure: nine digits is the SDKs' form; a BIC not
// opening with the country code 0 (§5.3) is a failed check.
func checkBIC(f *Findings, field, v string) {
	switch {
	case !digitsBetween(v, 9, 9):
		f.format.add(field, "БИК: 9 цифр")
	case !ValidBIC(v):
		f.checks.add(field, "БИК: первая цифра — код страны 0")
	}
}

// checkPayeeBIC is checkBIC for the payee's bank (field 14), which §5.3
// narrows: a credit institution's BIC opens with the country code 04, and
// only the treasury (TOFK) BICs of 2021 open with 0 but not 04, so such a
// BIC is a payee bank of budget payments alone (budget: the payee is the
// budget system's, IsBudgetPayment or a draft from a budget invoice). An
// ordinary payment to a treasury BIC names a bank that holds no such
// account: a failed check, as a BIC without the country code is. The
// Bank of Russia's own divisions (04…000–002) keep 04 and pass.
func checkPayeeBIC(f *Findings, v string, budget bool) {
	checkBIC(f, "payeeBankBic", v)
	if ValidBIC(v) && !budget && !CreditInstitutionBIC(v) {
		f.checks.add("payeeBankBic", "БИК банка получателя начинается с 04; БИК органа Федерального казначейства "+v+" — только в платеже в бюджет")
	}
}

// checkAccount sorts an account failure: not 20 digits is a format error, a
// wrong control key against the BIC a failed check (§5.4). Without a valid
// BIC the key cannot be computed; the BIC's own error covers it.
func checkAccount(f *Findings, field, what, account, bic string, corr bool) {
	if len(account) != 20 || !allDigits(account) {
		f.format.add(field, what+": 20 цифр")
		return
	}
	if !ValidBIC(bic) {
		return
	}
	var ok bool
	if corr {
		ok = ValidCorrAccount(account, bic)
	} else {
		ok = ValidAccount(account, bic)
	}
	if !ok {
		f.checks.add(field, what+": неверный контрольный ключ относительно БИК "+bic)
		return
	}
	// Digits 6–8 of an account number are its currency (the Bank of
	// Russia's chart of accounts): 810 for a rouble account, 643 on the
	// treasury's. A payment order in roubles neither leaves nor reaches an
	// account in another currency. A correspondent account is the bank's
	// and always in roubles, so it is not asked.
	if c := account[5:8]; !corr && c != "810" && c != "643" {
		f.checks.add(field, what+": счёт не в рублях (код валюты "+c+" в разрядах 6–8)")
	}
}

// hasLineBreak is strings.ContainsAny(s, "\r\n") without building a
// character set on each of the thirty calls per document.
func hasLineBreak(s string) bool {
	return strings.IndexByte(s, '\n') >= 0 || strings.IndexByte(s, '\r') >= 0
}

// DocValidityDays is how long a payment order is valid after the day it
// was drawn up, that day not counted (reference §5.6).
const DocValidityDays = 10

// DateLapsed reports whether a document dated date is past its validity on
// the bank's day today: dated more than DocValidityDays days before it.
// Creation refuses such a document, and signing or confirming a stored
// draft does too, so a draft left lying cannot be executed after the day a
// new one with its date would have been refused.
func DateLapsed(date, today time.Time) bool {
	return date.Before(today.AddDate(0, 0, -DocValidityDays))
}

// validateCommon checks the fields every document kind shares.
func validateCommon(p *problems, d *Payment, today time.Time) {
	// A line break inside a value would add or forge digest lines (§8).
	for _, f := range paymentDigestFields {
		// The amount is a JSON number literal, which cannot hold a line
		// break; skipping it saves formatting it on every request.
		if f.name != "amount" && hasLineBreak(f.value(d)) {
			p.add(f.name, "значение не может содержать перевод строки")
		}
	}
	if required(p, "externalId", d.ExternalID) && !gost.IsCanonicalUUID(d.ExternalID) {
		p.add("externalId", "externalId должен быть UUID")
	}
	if d.Number != "" && !digitsBetween(d.Number, 1, 6) {
		p.add("number", "номер документа: 1–6 цифр")
	}
	if d.PaymentNumber != "" && !digitsBetween(d.PaymentNumber, 1, 6) {
		p.add("paymentNumber", "номер документа: 1–6 цифр")
	}
	if required(p, "date", d.Date) {
		if t, ok := ParseDate(d.Date); !ok {
			p.add("date", "дата в формате YYYY-MM-DD")
		} else if DateLapsed(t, today) {
			p.add("date", "срок действия платёжного поручения (10 дней) истёк")
		}
	}
	if d.ExpirationDate != "" {
		if t, ok := ParseDate(d.ExpirationDate); !ok {
			p.add("expirationDate", "дата в формате YYYY-MM-DD")
		} else if today.After(t) {
			// A draft that could never be confirmed (§4.1: the payer
			// confirms by this day) is refused at once, not left to fail
			// at signing; the day itself still counts.
			p.add("expirationDate", "срок подтверждения уже истёк: дата не раньше сегодняшней")
		}
	}
	if required(p, "amount", string(d.Amount)) {
		if msg := amountInputFault(d.Amount, "сумма", true); msg != "" {
			p.add("amount", msg)
		}
	}
	if d.DeliveryKind != "" && !slices.Contains(deliveryKind, d.DeliveryKind) {
		p.add("deliveryKind", "вид платежа: электронно, срочно или 0")
	}
	if d.UrgencyCode != "" && !slices.Contains(urgencyCodes, d.UrgencyCode) {
		p.add("urgencyCode", "допустимые значения: "+strings.Join(urgencyCodes, ", "))
	}
	if d.VAT != nil {
		// A VAT block that does not say whether VAT is included, on top
		// or not charged says nothing the bank can print in the purpose:
		// both SDKs' validators require type whenever vat is sent.
		if required(p, "vat.type", d.VAT.Type) && !slices.Contains(vatTypes, d.VAT.Type) {
			p.add("vat.type", "тип НДС: "+strings.Join(vatTypes, ", "))
		}
		if !digitsBetween(d.VAT.Rate, 0, 2) {
			p.add("vat.rate", "ставка НДС: до 2 цифр")
		}
		if d.VAT.Amount != "" {
			if msg := amountInputFault(d.VAT.Amount, "сумма НДС", false); msg != "" {
				p.add("vat.amount", msg)
			}
		}
	}
	if d.PayeeOrgIDHash != "" && !isLowerHex64(d.PayeeOrgIDHash) {
		p.add("payeeOrgIdHash", "64 шестнадцатеричных символа")
	}
	for i, l := range d.LinkedDocs {
		if !gost.IsCanonicalUUID(l.DocExtID) {
			p.add("linkedDocs["+itoa(i)+"].docExtId", "идентификатор документа должен быть UUID")
		}
		if utf8.RuneCountInString(l.Type) > maxLinkedDocType {
			p.add("linkedDocs["+itoa(i)+"].type", "тип документа: не длиннее "+itoa(maxLinkedDocType)+" символов")
		}
	}
	if len(d.LinkedDocs) > maxLinkedDocs {
		p.add("linkedDocs", "не более "+itoa(maxLinkedDocs)+" документов")
	}
}

// maxLinkedDocs and maxLinkedDocType bound what a draft keeps of the
// partner's linked documents: the reference gives no limits, and a stored
// document should not grow without one.
const (
	maxLinkedDocs    = 100
	maxLinkedDocType = 100
)

// validatePayee checks the payee block; requireBank says the payee's name
// and bank are required (payment orders and -any/-budget drafts), budget
// that the payee is the budget system's, whose bank may be a treasury
// division (checkPayeeBIC).
func validatePayee(f *Findings, d *Payment, requireBank, budget bool) {
	p := &f.format
	if requireBank {
		if required(p, "payeeName", d.PayeeName) {
			checkName(f, "payeeName", "наименование получателя", d.PayeeName)
		}
		if required(p, "payeeBankBic", d.PayeeBankBIC) {
			checkPayeeBIC(f, d.PayeeBankBIC, budget)
		}
	}
	if d.PayeeINN != "" {
		checkINN(f, "payeeInn", "ИНН получателя", d.PayeeINN)
	}
	if d.PayeeKPP != "" {
		// As for the payer (§5.2): a 12-digit INN is an individual's or a
		// sole proprietor's, who have no KPP.
		if checkKPP(f, "payeeKpp", d.PayeeKPP) && len(d.PayeeINN) == 12 && d.PayeeKPP != "0" {
			f.checks.add("payeeKpp", "КПП не заполняется при 12-значном ИНН")
		}
	}
	if d.PayeeAccount != "" {
		checkAccount(f, "payeeAccount", "счёт получателя", d.PayeeAccount, d.PayeeBankBIC, false)
	}
	if d.PayeeBankCorrAccount != "" {
		checkAccount(f, "payeeBankCorrAccount", "корсчёт получателя", d.PayeeBankCorrAccount, d.PayeeBankBIC, true)
	}
}

// ValidateInvoice checks an invoice draft (reference §4.1) of kind k and
// answers every failure as a 400; the service uses InspectInvoice.
func ValidateInvoice(d *Payment, k DocKind, today time.Time) error {
	return InspectInvoice(d, k, today).Err(ChecksReject)
}

// InspectInvoice runs the rules of an invoice draft (reference §4.1) of
// kind k, a budget draft with the §5.8 rules on its payee
// (InspectInvoiceRules with budgetRules on).
func InspectInvoice(d *Payment, k DocKind, today time.Time) *Findings {
	return InspectInvoiceRules(d, k, today, true)
}

// InspectInvoiceRules is InspectInvoice; budgetRules adds the §5.8 logical
// controls to a draft from a budget invoice (CheckBudgetDraftRules), as
// InspectPayment's does to a budget payment.
func InspectInvoiceRules(d *Payment, k DocKind, today time.Time, budgetRules bool) *Findings {
	f := &Findings{}
	p := &f.format
	validateCommon(p, d, today)
	if required(p, "payeeAccount", d.PayeeAccount) && (len(d.PayeeAccount) != 20 || !allDigits(d.PayeeAccount)) {
		p.add("payeeAccount", "счёт получателя: 20 цифр")
	}
	if d.OperationCode != "" && d.OperationCode != "01" {
		p.add("operationCode", "допустимое значение: 01")
	}
	if d.Priority != "" && d.Priority != "4" && d.Priority != "5" {
		p.add("priority", "очерёдность: 4 или 5")
	}
	if d.VAT != nil && d.VAT.Type == "ONTOP" {
		// VAT on top of the amount is a payment order's choice: a draft
		// from an invoice pays the invoice's amount, VAT included or not
		// charged (reference §4.1: INCLUDED, NO_VAT or MANUAL).
		p.add("vat.type", "тип НДС в счёте: "+strings.Join(invoiceVATTypes, ", "))
	}
	if d.Purpose != "" {
		lenBetween(p, "purpose", d.Purpose, 1, 240)
		checkPurposeCharset(f, d.Purpose)
	}
	if k == KindInvoiceAny || k == KindInvoiceBudget {
		required(p, "payeeInn", d.PayeeINN) // its content is checked by validatePayee
		validatePayee(f, d, true, k == KindInvoiceBudget || IsBudgetPayment(d))
	}
	if k == KindInvoiceAny && d.IsPaidByCredit == nil {
		p.add("isPaidByCredit", "обязательное поле не заполнено")
	}
	if k == KindInvoiceBudget && d.DepartmentalInfo == nil {
		p.add("departmentalInfo", "обязательное поле не заполнено")
	}
	checkVAT(f, d)
	inspectDepartmental(f, d, false)
	if budgetRules && k == KindInvoiceBudget && f.deptField == "" && d.DepartmentalInfo != nil {
		if field, why := CheckBudgetDraftRules(d); field != "" {
			f.checks.add(field, why)
		}
	}
	return f
}
