package banking

import "time"

// The user-info claims the bank derives rather than stores as they are
// (reference §3 names them; their values come from the provider's samples
// in open-condo-software/condo, which is all that is public of them).

// territorialBanks names the territorial bank whose head office has the
// BIC. The one value seen from the provider, for an account at 044525225,
// is "Московский Банк Сбербанка РФ" (condo's user-info sample); the others
// are written the same way. An organisation served elsewhere gets its name
// from `banking org create --ter-bank`.
var territorialBanks = map[string]string{
	"044525225": "Московский Банк Сбербанка РФ",
	"044030653": "Северо-Западный Банк Сбербанка РФ",
	"042202603": "Волго-Вятский Банк Сбербанка РФ",
	"043601607": "Поволжский Банк Сбербанка РФ",
	"042007681": "Центрально-Черноземный Банк Сбербанка РФ",
	"046015602": "Юго-Западный Банк Сбербанка РФ",
	"046577674": "Уральский Банк Сбербанка РФ",
	"045004641": "Сибирский Банк Сбербанка РФ",
	"042520607": "Байкальский Банк Сбербанка РФ",
	"040813608": "Дальневосточный Банк Сбербанка РФ",
}

// TerritorialBank is user-info's terBank for the organisation: the name it
// was created with, else that of the territorial bank of the first of its
// accounts whose BIC is a territorial bank's, else "". The empty string is
// the default because a made-up bank name would be stored by clients as a
// fact (condo keeps terBank as the organisation's bank), while every
// client reading user-info takes an empty claim, as it does for the other
// claims the bank was not told.
func TerritorialBank(org Organisation, accts []Account) string {
	if org.TerBank != "" {
		return org.TerBank
	}
	for _, a := range accts {
		if name, ok := territorialBanks[a.BIC]; ok {
			return name
		}
	}
	return ""
}

// signingRights is the roles of the user's certificates active at now: a
// deactivated or expired certificate gives no right to sign, since the
// bank refuses signatures made with it (cert_lifecycle.go).
func signingRights(certs []Certificate, now time.Time) SignatureSet {
	var s SignatureSet
	for _, c := range certs {
		if !s.Has(c.Role) && c.UsableAt(now) {
			s.Roles = append(s.Roles, c.Role)
		}
	}
	return s
}

// userSignatureType names the user's signing right as the provider does
// ("Единственная подпись" in its sample): sole when the user's
// certificates complete a document alone, else first or second signature,
// else no right to sign.
func userSignatureType(s SignatureSet) string {
	switch {
	case s.Complete():
		return "Единственная подпись"
	case s.Has(RoleFirst):
		return "Первая подпись"
	case s.Has(RoleSecond):
		return "Вторая подпись"
	}
	return "Без права подписи"
}

// executiveClaim is individualExecutiveAgency: 1 for the organisation's
// sole executive body, else 0 (the provider's samples carry 0 and 1).
func executiveClaim(u User) int {
	if u.Executive {
		return 1
	}
	return 0
}
