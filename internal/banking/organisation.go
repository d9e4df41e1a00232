package banking

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"time"

	"partnerapi/internal/gost"
)

// ValidContour reports whether c names a contour.
func ValidContour(c string) bool {
	return c == ContourSandbox || c == ContourTest || c == ContourProduction
}

// Sandbox certificate uuids (reference §7).
const (
	SandboxCertSole      = "bb014b5d-8159-40be-97c1-eafeed4a8c3d"
	SandboxCertFirst     = "d5d4f811-f4d4-4205-a70f-58f772eeab72"
	SandboxCertSecond    = "4f29c8ef-b55d-43c7-a321-f2b1303a29cd"
	SandboxCertQualified = "f47ac10b-58cc-4372-a567-0e02b2c3d479"
)

// The sandbox organisation and what belongs to it; other areas' tests use
// these ids.
const (
	SandboxOrgID   = "3d5a0f4e-8b1c-4f7a-9e2d-5c6b7a8d9e01"
	SandboxOrgINN  = "7707083893"
	SandboxOrgKPP  = "773601001"
	SandboxOrgOGRN = "1027700132195"
	// The sandbox organisation's registered address and its user's phone
	// (user-info's orgJuridicalAddress and phone_number); identity
	// migration 0007 writes the same values into databases seeded before.
	SandboxOrgAddress   = "117997, г. Москва, ул. Вавилова, д. 19"
	SandboxUserPhone    = "+79000000000"
	SandboxAccount      = "40702810538833411733"
	SandboxAccount2     = "40702810838833411734"
	SandboxBIC          = "044525225"
	SandboxCorrAccount  = "30101810400000000225"
	SandboxUserID       = "7c1e2d3f-4a5b-4c6d-8e7f-901a2b3c4d5e"
	SandboxUserLogin    = "sandbox"
	SandboxUserPassword = "sandbox" // sandbox only: the login page's demo user
	SandboxClientID     = "sandbox-partner"
	SandboxRedirectURI  = "http://localhost/callback"
)

// SandboxCertTypes maps the sandbox certificate uuids to their crypto
// profile type.
var SandboxCertTypes = map[string]string{
	SandboxCertSole:      "SMS",
	SandboxCertFirst:     "SMS",
	SandboxCertSecond:    "SMS",
	SandboxCertQualified: "UKEP_UL",
}

// SandboxCertRoles maps the sandbox certificate uuids to their roles.
var SandboxCertRoles = map[string]SignatureRole{
	SandboxCertSole:      RoleSoleAuthority,
	SandboxCertFirst:     RoleFirst,
	SandboxCertSecond:    RoleSecond,
	SandboxCertQualified: RoleQualified,
}

// SandboxCertRole is the role of a sandbox certificate named by uuid in
// any case: IsCanonicalUUID accepts upper-case hex digits, so a partner
// writing the reference's uuids in upper case names the same certificate.
func SandboxCertRole(uuid string) (SignatureRole, bool) {
	r, ok := SandboxCertRoles[strings.ToLower(uuid)]
	return r, ok
}

// SandboxSeed is the sandbox's initial data. The partner app's secret is
// not seeded (its hash would be a known value); `banking app create` makes
// a real app, and `banking token` issues tokens for the sandbox app
// without one. The four certificates are freshly generated GOST
// certificates; Seed keeps the first ones it stored.
func SandboxSeed() (SeedData, error) {
	pw, err := HashPassword(SandboxUserPassword)
	if err != nil {
		return SeedData{}, err
	}
	s := SeedData{
		Orgs: []Organisation{{ID: SandboxOrgID, Name: "ООО «Песочница»", FullName: "Общество с ограниченной ответственностью «Песочница»",
			INN: SandboxOrgINN, KPP: SandboxOrgKPP, OGRN: SandboxOrgOGRN, JuridicalAddress: SandboxOrgAddress}},
		Accts: []Account{
			{Number: SandboxAccount, OrgID: SandboxOrgID, BIC: SandboxBIC, CorrAccount: SandboxCorrAccount, Currency: "810", Name: "Расчётный счёт", Status: AccountOpen, OpenDate: "2020-01-01"},
			{Number: SandboxAccount2, OrgID: SandboxOrgID, BIC: SandboxBIC, CorrAccount: SandboxCorrAccount, Currency: "810", Name: "Расчётный счёт 2", Status: AccountOpen, OpenDate: "2021-06-01"},
		},
		Users:  []User{{ID: SandboxUserID, OrgID: SandboxOrgID, Login: SandboxUserLogin, Name: "Иванов Иван Иванович", Email: "sandbox@example.com", Phone: SandboxUserPhone, PasswordHash: pw, Executive: true}},
		Apps:   []PartnerApp{{ClientID: SandboxClientID, Name: "Sandbox partner", SecretHash: HashSecret(NewClientSecret()), RedirectURIs: []string{SandboxRedirectURI}}},
		Offers: [][2]string{{SandboxClientID, SandboxAccount}, {SandboxClientID, SandboxAccount2}},
	}
	for _, uuid := range []string{SandboxCertSole, SandboxCertFirst, SandboxCertSecond, SandboxCertQualified} {
		key, err := gost.GenerateKey(gost.TC26256A, rand.Reader)
		if err != nil {
			return SeedData{}, err
		}
		now := time.Now()
		cert, err := gost.SelfSignedCertificate(key, "Sandbox "+SandboxCertTypes[uuid]+" "+uuid[:8], now.Add(-time.Hour), now.AddDate(5, 0, 0))
		if err != nil {
			return SeedData{}, err
		}
		s.Certs = append(s.Certs, Certificate{UUID: uuid, UserID: SandboxUserID, OrgID: SandboxOrgID, DER: cert.Raw,
			Issuer: cert.Issuer, Serial: cert.SerialHex, TypeName: SandboxCertTypes[uuid], Role: SandboxCertRoles[uuid], Active: true})
	}
	return s, nil
}

// SeedSandbox stores the sandbox data unless it is there already.
func (id *Identity) SeedSandbox(ctx context.Context) error {
	// The seed is written in one transaction, so a present organisation
	// means a complete seed; skipping spares every start and every CLI call
	// the key generation and password hashing.
	if _, err := id.Store.GetOrg(ctx, SandboxOrgID); err == nil {
		return nil
	} else if !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("sandbox seed: %w", err)
	}
	s, err := SandboxSeed()
	if err != nil {
		return fmt.Errorf("sandbox seed: %w", err)
	}
	return id.Store.Seed(ctx, s)
}

func digitsN(s string, n int) bool { return len(s) == n && allDigits(s) }

// Validate checks an organisation's registration numbers as the bank's
// checks of its payments will (reference §5.1, §5.2): a 10- or 12-digit INN
// with its check digits, a KPP (none for a 12-digit INN, whose holder is a
// person) and an OGRN or OGRNIP with its check digit. An organisation
// registered with a number its own payments fail on would get CHECKERROR
// on every one of them.
func (o Organisation) Validate() error {
	var bad, why []string
	add := func(field, check string) { bad, why = append(bad, field), append(why, check) }
	if o.Name == "" {
		add("name", "required")
	}
	switch {
	case !digitsN(o.INN, 10) && !digitsN(o.INN, 12):
		add("inn", "format")
	case !ValidINN(o.INN):
		add("inn", "check digit")
	}
	switch {
	case o.KPP == "":
	case o.KPP == "0" || !ValidKPP(o.KPP):
		add("kpp", "format")
	case len(o.INN) == 12:
		add("kpp", "none with a 12-digit inn")
	}
	switch {
	case o.OGRN == "":
	case !digitsN(o.OGRN, 13) && !digitsN(o.OGRN, 15):
		add("ogrn", "format")
	case !ValidOGRN(o.OGRN):
		add("ogrn", "check digit")
	}
	if bad != nil {
		return &Error{Kind: KindValidation, Message: "Организация не соответствует модели", FieldNames: bad, Checks: why}
	}
	return nil
}

// Validate checks an account's numbers and its status: the account's
// control key against its bank's BIC, and the correspondent account's
// against the Bank of Russia division's (reference §5.3, §5.4), as its
// payments will be checked. The BIC is the bank's own, a credit
// institution's, so it opens with 04 (§5.3): a treasury (TOFK) BIC, 0 but
// not 04, holds budget accounts of the Federal Treasury, never a client's
// settlement account, and payment orders from such an account would name
// a payer bank no credit institution has.
func (a Account) Validate() error {
	var bad, why []string
	add := func(field, check string) { bad, why = append(bad, field), append(why, check) }
	bicOK := false
	switch {
	case !digitsN(a.BIC, 9):
		add("bic", "format")
	case !ValidBIC(a.BIC):
		add("bic", "country code 0")
	case !CreditInstitutionBIC(a.BIC):
		add("bic", "a credit institution's BIC opens with 04; "+a.BIC+" is a treasury (TOFK) BIC")
	default:
		bicOK = true
	}
	switch {
	case !digitsN(a.Number, 20):
		add("number", "format")
	case bicOK && !ValidAccount(a.Number, a.BIC):
		add("number", "control key")
	}
	switch {
	case a.CorrAccount == "":
	case !digitsN(a.CorrAccount, 20):
		add("corrAccount", "format")
	case bicOK && !ValidCorrAccount(a.CorrAccount, a.BIC):
		add("corrAccount", "control key")
	}
	if a.Status != AccountOpen && a.Status != AccountBlocked && a.Status != AccountClosed {
		add("status", "OPEN, BLOCKED or CLOSED")
	}
	// client-info answers the opening date as it is stored, so it is a
	// real day (or not known at all), as the close date below.
	if a.OpenDate != "" {
		if _, ok := ParseDate(a.OpenDate); !ok {
			add("openDate", "format YYYY-MM-DD")
		}
	}
	// A close date belongs to a closed account alone, and an account is
	// not closed before it was opened.
	if a.CloseDate != "" {
		closed, ok := ParseDate(a.CloseDate)
		opened, openOK := ParseDate(a.OpenDate)
		switch {
		case !ok:
			add("closeDate", "format YYYY-MM-DD")
		case a.Status != AccountClosed:
			add("closeDate", "only for a CLOSED account")
		case openOK && closed.Before(opened):
			add("closeDate", "not before openDate "+a.OpenDate)
		}
	}
	if bad != nil {
		return &Error{Kind: KindValidation, Message: "Счёт не соответствует модели", FieldNames: bad, Checks: why}
	}
	return nil
}

// SandboxPaymentJSON is a sole-signed ruble payment from the sandbox
// organisation's account, the create that `partnerapi bench banking` and the
// handler benchmarks send: one text, so both measure the same document.
func SandboxPaymentJSON(externalID, date string) []byte {
	return []byte(`{"externalId":"` + externalID + `","date":"` + date + `","amount":1500.50,` +
		`"operationCode":"01","priority":"5","purpose":"Оплата по счёту, без НДС","payerName":"ООО Песочница",` +
		`"payerInn":"` + SandboxOrgINN + `","payerAccount":"` + SandboxAccount + `","payerBankBic":"` + SandboxBIC +
		`","payerBankCorrAccount":"` + SandboxCorrAccount + `","payeeName":"АО Лютик","payeeInn":"7830002293",` +
		`"payeeAccount":"40602810700000000025","payeeBankBic":"049805746","payeeBankCorrAccount":"30101810800000000746",` +
		`"digestSignatures":[{"base64Encoded":"MIIB","certificateUuid":"` + SandboxCertSole + `"}]}`)
}

// orgForms are the legal forms an organisation's name may open with, in
// full and abbreviated, each with the abbreviation /v1/client-info answers
// (reference §10 orgForm). Longer names come first, so "Публичное
// акционерное общество" is not read as "Акционерное общество".
var orgForms = []struct{ prefix, form string }{
	{"общество с ограниченной ответственностью", "ООО"},
	{"публичное акционерное общество", "ПАО"},
	{"непубличное акционерное общество", "НАО"},
	{"закрытое акционерное общество", "ЗАО"},
	{"открытое акционерное общество", "ОАО"},
	{"акционерное общество", "АО"},
	{"индивидуальный предприниматель", "ИП"},
	{"ООО", "ООО"}, {"ПАО", "ПАО"}, {"НАО", "НАО"}, {"ЗАО", "ЗАО"}, {"ОАО", "ОАО"}, {"АО", "АО"}, {"ИП", "ИП"},
}

// Form is the organisation's legal form as /v1/client-info names it: the
// form its recorded name (short, then full) opens with, else ИП for a
// 12-digit INN (a sole proprietor's; a legal entity's has 10), else "" —
// the bank's record does not say, and a guessed ООО would misstate it.
func (o Organisation) Form() string {
	for _, name := range []string{o.Name, o.FullName} {
		name = strings.TrimSpace(name)
		for _, f := range orgForms {
			if len(name) < len(f.prefix) || !strings.EqualFold(name[:len(f.prefix)], f.prefix) {
				continue
			}
			// The form must be a whole word: "АОр…" is no АО.
			rest := name[len(f.prefix):]
			if rest == "" || strings.ContainsRune(" «\"'", []rune(rest)[0]) {
				return f.form
			}
		}
	}
	if len(o.INN) == 12 {
		return "ИП"
	}
	return ""
}

// FormFull is the legal form Form names, written out ("Общество с
// ограниченной ответственностью" for ООО), as user-info's orgLawForm
// beside the abbreviation in orgLawFormShort (reference §3); "" when Form
// is.
func (o Organisation) FormFull() string {
	short := o.Form()
	for _, f := range orgForms {
		if f.form == short && f.prefix != short {
			r := []rune(f.prefix)
			return strings.ToUpper(string(r[0])) + string(r[1:])
		}
	}
	return ""
}
