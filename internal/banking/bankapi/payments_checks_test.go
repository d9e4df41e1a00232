package bankapi

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"partnerapi/internal/banking"
)

// treasuryPayee makes payDoc a budget payment of the single tax payment
// (ЕНП requisites, reference §5.8) with departmentalInfo di.
func treasuryPayee(di map[string]any) map[string]any {
	p := map[string]any{"departmentalInfo": di,
		"payeeName": "Казначейство России (ФНС России)", "payeeInn": "7727406020", "payeeKpp": "770701001",
		"payeeAccount": "03100643000000018500", "payeeBankBic": "017003983", "payeeBankCorrAccount": "40102810445370000059"}
	// From 2026-04-01 an organisation's ЕНП carries payer KPP 0, its other
	// budget payments its real KPP (§5.2), which the base document has.
	if di["kbk"] == banking.ENPKBK {
		p["payerKpp"] = "0"
	}
	return p
}

// customsPayee makes payDoc a customs payment (reference §5.8): status 06
// to the FTS's requisites, reason 00 without a basis document, field 107 a
// customs office's code; over replaces members of its departmentalInfo.
func customsPayee(over map[string]any) map[string]any {
	di := enpBlock(map[string]any{"drawerStatus101": "06", "kbk": "15311009000010000180", "oktmo": "45328000",
		"reasonCode106": "00", "taxPeriod107": "10702000"})
	return merge(treasuryPayee(merge(di, over)), map[string]any{"payeeAccount": "03100643000000019502", "payeeKpp": "773001001"})
}

func enpBlock(over map[string]any) map[string]any {
	di := map[string]any{"drawerStatus101": "01", "kbk": banking.ENPKBK, "oktmo": "0", "reasonCode106": "0",
		"taxPeriod107": "0", "docNumber108": "0", "docDate109": "0", "uip": "0"}
	for k, v := range over {
		di[k] = v
	}
	return di
}

func merge(a, b map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// checksumCases are the check-digit and logical-control failures of
// reference §5 with the field each must name.
var checksumCases = []struct {
	name  string
	over  map[string]any
	field string
}{
	{"payer inn check digit", map[string]any{"payerInn": "7707083894"}, "payerInn"},
	{"payee inn check digit", map[string]any{"payeeInn": "7830002294"}, "payeeInn"},
	{"payee inn (12) check digit", map[string]any{"payeeInn": "500100732258", "payeeKpp": "0"}, "payeeInn"},
	// The payer account is the organisation's real one (an account with a
	// wrong key is not at the bank: WORKFLOW_FAULT); the BIC sent with it
	// is not its bank's, so the key fails against it.
	{"payer account key", map[string]any{"payerBankBic": "044525226"}, "payerAccount"},
	{"payee account key", map[string]any{"payeeAccount": "40602810800000000025"}, "payeeAccount"},
	{"payer corr account key", map[string]any{"payerBankCorrAccount": "30101810400000000226"}, "payerBankCorrAccount"},
	{"payee corr account key", map[string]any{"payeeBankCorrAccount": "30101810800000000747"}, "payeeBankCorrAccount"},
	{"kpp with a 12-digit inn", map[string]any{"payerInn": "500100732259"}, "payerKpp"},
	{"payee kpp with a 12-digit payee inn", map[string]any{"payeeInn": "500100732259", "payeeKpp": "783001001"}, "payeeKpp"},
	{"income type to a company", map[string]any{"incomeTypeCode": "1"}, "incomeTypeCode"},
	// The SDKs' pattern ^[1-9]{1,6}$ lets 6 and 12 through; the rules'
	// 1..5 is a check (reference §15 #8), even to an individual.
	{"income type 6 to an individual", map[string]any{"incomeTypeCode": "6", "payeeAccount": "40817810900000000021",
		"payeeInn": "500100732259", "payeeKpp": "0"}, "incomeTypeCode"},
	{"income type 12 to an individual", map[string]any{"incomeTypeCode": "12", "payeeAccount": "40817810900000000021",
		"payeeInn": "500100732259", "payeeKpp": "0"}, "incomeTypeCode"},
	{"uin check digit", map[string]any{"departmentalInfo": map[string]any{"uip": "18210102010011000110"}}, "departmentalInfo.uip"},
	// Values the SDKs' patterns let through that the rules refuse
	// (reference §15 #8): a KPP opening with 00 (§5.2), a BIC without the
	// country code 0 (§5.3), a name over the rules' 160 characters (§4).
	{"payee kpp opening with 00", map[string]any{"payeeKpp": "003601001"}, "payeeKpp"},
	{"payer kpp opening with 00", map[string]any{"payerKpp": "003601001"}, "payerKpp"},
	{"payee bic without the country code", map[string]any{"payeeBankBic": "149805746"}, "payeeBankBic"},
	// Only budget payees bank at a treasury (TOFK) BIC, which opens with 0
	// but not 04 (§5.3); the account and correspondent account here keep
	// their keys against it, so the BIC is the one failure.
	{"payee bic of a treasury division on an ordinary payment", map[string]any{"payeeBankBic": "004525988",
		"payeeAccount": "40602810900000000025", "payeeBankCorrAccount": "30101810400000000225"}, "payeeBankBic"},
	{"payer name over 160 characters", map[string]any{"payerName": strings.Repeat("я", 161)}, "payerName"},
	{"payee name over 160 characters", map[string]any{"payeeName": strings.Repeat("я", 200)}, "payeeName"},
	// The purpose's characters are the rules' set (§5.6), which the
	// SDKs' ^.{1,210}$ does not limit.
	{"purpose with an emoji", map[string]any{"purpose": "Оплата по счёту 😀, без НДС"}, "purpose"},
	{"purpose with a tab", map[string]any{"purpose": "Оплата\tпо счёту, без НДС"}, "purpose"},
	{"purpose in another script", map[string]any{"purpose": "付款 без НДС"}, "purpose"},
	{"purpose 0 outside a single tax payment", map[string]any{"purpose": "0"}, "purpose"},
	{"budget: status 01 to 03212", merge(treasuryPayee(enpBlock(nil)), map[string]any{"payeeAccount": "03212643000000018500"}), "payeeAccount"},
	{"budget: 03100 without field 101", treasuryPayee(nil), "departmentalInfo.drawerStatus101"},
	// The ЕНП goes to the tax service's requisites only (§5.8); its payee
	// KPP changed on 2025-12-05, and these documents are dated after.
	{"budget: ЕНП to the payee KPP before 2025-12-05", merge(treasuryPayee(enpBlock(nil)), map[string]any{"payeeKpp": "770801001"}), "payeeKpp"},
	{"budget: ЕНП to the customs account", merge(treasuryPayee(enpBlock(nil)), map[string]any{"payeeAccount": "03100643000000019502"}), "payeeAccount"},
	{"budget: ЕНП to another payee", merge(treasuryPayee(enpBlock(nil)), map[string]any{"payeeInn": "7702807750"}), "payeeInn"},
	{"budget: ЕНП through another ЕКС", merge(treasuryPayee(enpBlock(nil)), map[string]any{"payeeBankCorrAccount": "40102810545370000003",
		"payeeBankBic": "004525988"}), "payeeBankBic"},
	{"budget: ЕНП with the payer's KPP", merge(treasuryPayee(enpBlock(nil)), map[string]any{"payerKpp": "773601001"}), "payerKpp"},
	{"budget: tax payment with payer KPP 0", merge(treasuryPayee(enpBlock(map[string]any{"kbk": "18210102010011000110", "oktmo": "45328000"})),
		map[string]any{"payerKpp": "0"}), "payerKpp"},
	{"budget: ЕНП with oktmo", treasuryPayee(enpBlock(map[string]any{"oktmo": "45328000"})), "departmentalInfo.oktmo"},
	{"budget: tax without oktmo", treasuryPayee(enpBlock(map[string]any{"kbk": "18210102010011000110"})), "departmentalInfo.oktmo"},
	// Statuses 01 and 13 to the tax service name no tax period: the
	// payment is credited by the single tax account, whatever its KBK
	// (reference §5.8, field 107).
	{"budget: status 01 to the tax service with a tax period", treasuryPayee(enpBlock(map[string]any{"kbk": "18210102010011000110",
		"oktmo": "45328000", "taxPeriod107": "МС.10.2026"})), "departmentalInfo.taxPeriod107"},
	{"budget: status 13 to a tax kbk with a tax period", treasuryPayee(enpBlock(map[string]any{"drawerStatus101": "13",
		"kbk": "18210102010011000110", "oktmo": "45328000", "taxPeriod107": "ГД.00.2025"})), "departmentalInfo.taxPeriod107"},
	// Status 13 without the payer's INN is identified to the tax service
	// only by the UIN (reference §5.8, field 22).
	{"budget: status 13 to the tax service without inn and uin", merge(treasuryPayee(enpBlock(map[string]any{"drawerStatus101": "13"})),
		map[string]any{"payerInn": "0", "payerKpp": "0"}), "departmentalInfo.uip"},
	{"budget: status 13 to a tax kbk without inn and uin", merge(treasuryPayee(enpBlock(map[string]any{"drawerStatus101": "13",
		"kbk": "18210102010011000110", "oktmo": "45328000"})), map[string]any{"payerInn": "0", "payerKpp": "0", "payeeInn": "7702807750"}), "departmentalInfo.uip"},
	// Status 24 without the payer's INN and a UIN identifies the payer by
	// a document: field 108 is its two-digit type and number (§5.8).
	{"budget: status 24 without inn, uin and document type", merge(treasuryPayee(enpBlock(map[string]any{"drawerStatus101": "24",
		"kbk": "32111301031010000130", "oktmo": "45328000", "docNumber108": "4510123456"})),
		map[string]any{"payerInn": "0", "payerKpp": "0", "payeeInn": "7702807750", "payeeAccount": "03212643000000017300"}), "departmentalInfo.docNumber108"},
	{"budget: status 31 without uin", merge(treasuryPayee(enpBlock(map[string]any{"drawerStatus101": "31", "kbk": "15311601201010001140"})),
		map[string]any{"payeeAccount": "03212643000000018500"}), "departmentalInfo.uip"},
	// A customs payment follows the customs rules of fields 105–109 and
	// no budget payment fills field 110 (§5.8).
	{"budget: customs payment with tax period 0", customsPayee(map[string]any{"taxPeriod107": "0"}), "departmentalInfo.taxPeriod107"},
	{"budget: customs payment with reason 0", customsPayee(map[string]any{"reasonCode106": "0"}), "departmentalInfo.reasonCode106"},
	{"budget: customs declaration without its date", customsPayee(map[string]any{"reasonCode106": "ПК", "docNumber108": "1234567"}),
		"departmentalInfo.docDate109"},
	{"budget: customs status to the tax service", merge(customsPayee(nil), map[string]any{"payeeAccount": "03100643000000018500"}), "payeeAccount"},
	{"budget: field 110 filled", treasuryPayee(enpBlock(map[string]any{"paymentKind110": "1"})), "departmentalInfo.paymentKind110"},
	// Operation codes 02 and 06 are budget payments' alone (reference §4).
	{"operation code 02 outside the budget", map[string]any{"operationCode": "02"}, "operationCode"},
	{"operation code 06 outside the budget", map[string]any{"operationCode": "06"}, "operationCode"},
}

// By default a failed check digit or logical control stores the document:
// 201, CHECKERROR, a bankComment naming the field (reference §13).
func TestPaymentsChecksumFailuresCheckError(t *testing.T) {
	e := newPayEnv(t)
	for i, tc := range checksumCases {
		t.Run(tc.name, func(t *testing.T) {
			id := newUUID(500 + i)
			// Signed with the sole certificate: a failed check still stops
			// processing at CHECKERROR.
			st, m, raw := e.do("POST", paymentsBase, "pay", payDoc(id, merge(tc.over, map[string]any{"digestSignatures": sigs(banking.SandboxCertSole)})))
			if st != 201 || m["bankStatus"] != "CHECKERROR" {
				t.Fatalf("%d %s", st, raw)
			}
			if c, _ := m["bankComment"].(string); !strings.Contains(c, "Ошибка в поле "+tc.field+": ") {
				t.Fatalf("bankComment %q does not name %s", c, tc.field)
			}
			if st, s, _ := e.do("GET", paymentsBase+"/"+id+"/state", "pay", ""); st != 200 || s["bankStatus"] != "CHECKERROR" || s["bankComment"] != m["bankComment"] {
				t.Fatalf("state %d %v", st, s)
			}
		})
	}
}

// Switched to reject, the same failures are 400 VALIDATION_FAULT naming the
// field, and nothing is stored.
func TestPaymentsChecksumFailuresReject(t *testing.T) {
	e := newPayEnv(t)
	e.svc.Config.ChecksumFailures = banking.ChecksReject
	for i, tc := range checksumCases {
		t.Run(tc.name, func(t *testing.T) {
			id := newUUID(600 + i)
			st, m, raw := e.do("POST", paymentsBase, "pay", payDoc(id, tc.over))
			if st != 400 || m["cause"] != "VALIDATION_FAULT" {
				t.Fatalf("%d %s", st, raw)
			}
			names, _ := m["fieldNames"].([]any)
			checks, _ := m["checks"].([]any)
			if !slices.Contains(names, any(tc.field)) || len(checks) != len(names) {
				t.Fatalf("fieldNames %v checks %v, want %s", names, checks, tc.field)
			}
			if st, m, _ := e.do("GET", paymentsBase+"/"+id, "pay", ""); st != 404 || m["cause"] != "DATA_NOT_FOUND_EXCEPTION" {
				t.Fatalf("rejected document stored: %d %v", st, m)
			}
		})
	}
	// A malformed departmentalInfo member stays CHECKERROR in either mode:
	// that is the spec's own sandbox row (reference §4, §7).
	st, m, raw := e.do("POST", paymentsBase, "pay", payDoc(newUUID(699), map[string]any{"departmentalInfo": map[string]any{"kbk": "123"}}))
	if st != 201 || m["bankStatus"] != "CHECKERROR" || !strings.Contains(m["bankComment"].(string), "departmentalInfo.kbk") {
		t.Fatalf("malformed block in reject mode: %d %s", st, raw)
	}
}

// The budget rules are on by default and apply only to budget payments:
// the spec's accepted departmentalInfo shapes on an ordinary payee and a
// well-formed ЕНП pass; switched off, a misrouted budget payment passes.
func TestPaymentsBudgetRules(t *testing.T) {
	e := newPayEnv(t)
	for i, over := range []map[string]any{
		{"departmentalInfo": enpBlock(map[string]any{"oktmo": "45328000"})}, // ordinary payee: not a budget payment
		treasuryPayee(enpBlock(nil)),
		customsPayee(nil),
		customsPayee(map[string]any{"reasonCode106": "ПК", "docNumber108": "1234567", "docDate109": "15.11.2026"}),
		// Without the payer's INN: status 13 with a UIN, status 24 with an
		// identity document (type 01 and its number) in field 108.
		merge(treasuryPayee(enpBlock(map[string]any{"drawerStatus101": "13", "uip": "18210102010011000116"})),
			map[string]any{"payerInn": "0", "payerKpp": "0"}),
		merge(treasuryPayee(enpBlock(map[string]any{"drawerStatus101": "24", "kbk": "32111301031010000130", "oktmo": "45328000",
			"docNumber108": "014510123456"})), map[string]any{"payerInn": "0", "payerKpp": "0", "payeeInn": "7702807750",
			"payeeAccount": "03212643000000017300"}),
		// A tax period where the rules keep it: status 01 to another
		// administrator than the tax service.
		merge(treasuryPayee(enpBlock(map[string]any{"kbk": "32111301031010000130", "oktmo": "45328000", "taxPeriod107": "МС.10.2026"})),
			map[string]any{"payeeInn": "7702807750"}),
		{"payeeInn": "500100732259", "payeeKpp": "0"},                              // a sole proprietor payee without KPP
		merge(treasuryPayee(enpBlock(nil)), map[string]any{"operationCode": "06"}), // budget payments may carry 02 and 06
	} {
		if st, m, raw := e.do("POST", paymentsBase, "pay", payDoc(newUUID(700+i), over)); st != 201 || m["bankStatus"] != "CREATED" {
			t.Fatalf("case %d: %d %s", i, st, raw)
		}
	}
	e.svc.Config.SkipBudgetRules = true
	misrouted := merge(treasuryPayee(enpBlock(nil)), map[string]any{"payeeAccount": "03212643000000018500"})
	if st, m, raw := e.do("POST", paymentsBase, "pay", payDoc(newUUID(710), misrouted)); st != 201 || m["bankStatus"] != "CREATED" {
		t.Fatalf("rules off: %d %s", st, raw)
	}
}

// Invoice drafts place failed checks the same way.
func TestInvoiceChecksumFailures(t *testing.T) {
	e := newPayEnv(t)
	body := func(id string) string {
		b, _ := json.Marshal(map[string]any{"externalId": id, "amount": json.Number("99.9"), "date": "2026-11-22", "purpose": "Счёт 7",
			"payeeAccount": banking.SandboxAccount, "isPaidByCredit": false, "payeeBankBic": "044525225",
			"payeeInn": "7707083894", "payeeName": "ООО Ромашка"})
		return string(b)
	}
	st, m, raw := e.do("POST", paymentsBase+"/from-invoice-any", "inv", body(newUUID(720)))
	if st != 201 || m["bankStatus"] != "CHECKERROR" || !strings.Contains(m["bankComment"].(string), "payeeInn") {
		t.Fatalf("checkerror: %d %s", st, raw)
	}
	e.svc.Config.ChecksumFailures = banking.ChecksReject
	st, m, raw = e.do("POST", paymentsBase+"/from-invoice-any", "inv", body(newUUID(721)))
	if st != 400 || m["cause"] != "VALIDATION_FAULT" || !slices.Contains(m["fieldNames"].([]any), any("payeeInn")) {
		t.Fatalf("reject: %d %s", st, raw)
	}
}

// A payment order dated CheckErrorDaysAhead days or more ahead is stored in
// CHECKERROR naming date, like an invoice draft (reference §5.6), signed or
// not and in either checksum mode, so it is never executed; the threshold
// is configurable and can be switched off.
func TestPaymentsFutureDate(t *testing.T) {
	sole := map[string]any{"digestSignatures": sigs(banking.SandboxCertSole)}
	for i, tc := range []struct {
		name   string
		days   int // CheckErrorDaysAhead
		mode   banking.ChecksumMode
		date   string
		over   map[string]any
		status string
	}{
		{"today +9", 0, "", "2026-12-01", nil, "CREATED"},
		{"today +9 signed", 0, "", "2026-12-01", sole, "IMPLEMENTED"},
		{"today +10", 0, "", "2026-12-02", nil, "CHECKERROR"},
		{"today +10 signed", 0, "", "2026-12-02", sole, "CHECKERROR"},
		{"today +10 partly signed", 0, "", "2026-12-02", map[string]any{"digestSignatures": sigs(banking.SandboxCertFirst)}, "CHECKERROR"},
		{"today +40 signed", 0, "", "2027-01-01", sole, "CHECKERROR"},
		{"today +10 signed, reject mode", 0, banking.ChecksReject, "2026-12-02", sole, "CHECKERROR"},
		{"threshold 3: today +2 signed", 3, "", "2026-11-24", sole, "IMPLEMENTED"},
		{"threshold 3: today +3 signed", 3, "", "2026-11-25", sole, "CHECKERROR"},
		{"off: today +40 signed", -1, "", "2027-01-01", sole, "IMPLEMENTED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newPayEnv(t)
			e.svc.Config.CheckErrorDaysAhead, e.svc.Config.ChecksumFailures = tc.days, tc.mode
			id := newUUID(800 + i)
			st, m, raw := e.do("POST", paymentsBase, "pay", payDoc(id, merge(tc.over, map[string]any{"date": tc.date})))
			if st != 201 || m["bankStatus"] != tc.status {
				t.Fatalf("%d %s, want 201 %s", st, raw, tc.status)
			}
			comment, _ := m["bankComment"].(string)
			if (tc.status == "CHECKERROR") != strings.Contains(comment, "Ошибка в поле date: ") {
				t.Fatalf("bankComment %q", comment)
			}
			if st, g, _ := e.do("GET", paymentsBase+"/"+id, "pay", ""); st != 200 || g["bankStatus"] != tc.status {
				t.Fatalf("get %d %v", st, g)
			}
			// A far-dated document stays out of signing as well.
			if tc.status == "CHECKERROR" {
				b, _ := json.Marshal(map[string]any{"digestSignatures": sigs(banking.SandboxCertSole)})
				if st, s, _ := e.do("POST", paymentsBase+"/"+id+"/sign", "pay", string(b)); st != 400 || s["cause"] != "WORKFLOW_FAULT" {
					t.Fatalf("sign: %d %v", st, s)
				}
			}
		})
	}
}
