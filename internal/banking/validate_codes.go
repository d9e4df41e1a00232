package banking

import (
	"strconv"
	"strings"
)

// Check-digit algorithms of reference §5 ([L]). Each takes the field as sent
// and reports whether it is well formed; the callers decide what "absent"
// means for their field.

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func allZero(s string) bool { return strings.Trim(s, "0") == "" }

func weighted(s string, weights []int) int {
	sum := 0
	for i, w := range weights {
		sum += int(s[i]-'0') * w
	}
	return sum
}

// innFormatOK checks the shape of an INN without its check digits: `0`, or
// 5, 10 or 12 digits not starting with `00` (§5.1).
func innFormatOK(s string) bool {
	if s == "0" {
		return true
	}
	n := len(s)
	return allDigits(s) && !strings.HasPrefix(s, "00") && (n == 5 || n == 10 || n == 12)
}

// ValidINN checks an INN (§5.1): `0` (absent), a 5-digit КИО, or a 10/12-digit
// INN whose check digits match. A leading `00` is never issued.
func ValidINN(s string) bool {
	if s == "0" {
		return true
	}
	if !allDigits(s) || strings.HasPrefix(s, "00") {
		return false
	}
	switch len(s) {
	case 5:
		return true
	case 10:
		c := weighted(s, []int{2, 4, 10, 3, 5, 9, 4, 6, 8}) % 11 % 10
		return c == int(s[9]-'0')
	case 12:
		c11 := weighted(s, []int{7, 2, 4, 10, 3, 5, 9, 4, 6, 8}) % 11 % 10
		c12 := weighted(s, []int{3, 7, 2, 4, 10, 3, 5, 9, 4, 6, 8}) % 11 % 10
		return c11 == int(s[10]-'0') && c12 == int(s[11]-'0')
	}
	return false
}

// ValidOGRN checks a state registration number (§5.1): an OGRN of 13 digits
// whose last is the first twelve as a number mod 11 mod 10, or a sole
// proprietor's OGRNIP of 15 whose last is the first fourteen mod 13 mod 10.
func ValidOGRN(s string) bool {
	if !allDigits(s) || (len(s) != 13 && len(s) != 15) {
		return false
	}
	n, _ := strconv.ParseUint(s[:len(s)-1], 10, 64)
	m := uint64(11)
	if len(s) == 15 {
		m = 13
	}
	return n%m%10 == uint64(s[len(s)-1]-'0')
}

// ValidKPP checks a KPP (§5.2): `0` or NNNN + two digits/capital letters +
// NNN, not starting with `00`.
func ValidKPP(s string) bool {
	return kppFormatOK(s) && !strings.HasPrefix(s, "00")
}

// kppFormatOK checks the shape of a KPP, ValidKPP without the rule that no
// KPP opens with 00.
func kppFormatOK(s string) bool {
	if s == "0" {
		return true
	}
	if len(s) != 9 || !allDigits(s[:4]) || !allDigits(s[6:]) {
		return false
	}
	for i := 4; i < 6; i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// ValidBIC checks a BIC (§5.3): nine digits starting with the country code
// `0`. Credit institutions have `04`, treasury (TOFK) BICs since 2021 start
// with `0` but not `04`, so only the leading `0` is required.
func ValidBIC(s string) bool { return len(s) == 9 && allDigits(s) && s[0] == '0' }

// CreditInstitutionBIC reports whether a valid BIC opens with the country
// code 04 (§5.3): a credit institution's or a Bank of Russia division's,
// not one of the treasury (TOFK) BICs introduced in 2021.
func CreditInstitutionBIC(s string) bool { return ValidBIC(s) && s[1] == '4' }

// accountKeyOK runs the control-key check of instruction 515 (§5.4) with a
// 3-digit prefix: weights 7 1 3 over prefix+account, sum of the products'
// low digits ≡ 0 (mod 10).
func accountKeyOK(prefix, account string) bool {
	if len(prefix)+len(account) != 23 || !noneButDigits(prefix) || !noneButDigits(account) {
		return false
	}
	// The weights run on over prefix and account as one 23-digit string;
	// walking the two halves saves building it. The products' low digits
	// come from a table, since a division per digit made this check, run
	// four times a document, cost more than the rest of its validation.
	sum, i := 0, 0
	for _, part := range [2]string{prefix, account} {
		for j := 0; j < len(part); j++ {
			sum += int(keyLowDigits[i][(part[j]-'0')&15])
			if i++; i == 3 {
				i = 0
			}
		}
	}
	return sum%10 == 0
}

// keyLowDigits[i][d] is the low digit of d times the control key's i-th
// weight (7, 1, 3); rows are 16 wide so that a digit indexes them without a
// bounds check.
var keyLowDigits = func() (t [3][16]uint8) {
	for i, w := range [3]int{7, 1, 3} {
		for d := range 10 {
			t[i][d] = uint8(d * w % 10)
		}
	}
	return t
}()

// noneButDigits is allDigits that also accepts "": a key's prefix and
// account are checked as the halves of one string.
func noneButDigits(s string) bool { return s == "" || allDigits(s) }

// ValidAccount checks a 20-digit account held at the bank with this BIC:
// the prefix is BIC digits 7–9 at a credit institution, "0" + BIC digits
// 5–6 at a Bank of Russia division (BankOfRussiaDivision); treasury
// accounts (`03…`) have no valid prefix and skip the key (§5.4).
func ValidAccount(account, bic string) bool {
	if len(account) != 20 || !allDigits(account) {
		return false
	}
	if strings.HasPrefix(account, "03") {
		return true
	}
	if !ValidBIC(bic) {
		return false
	}
	if BankOfRussiaDivision(bic) {
		return accountKeyOK("0"+bic[4:6], account)
	}
	return accountKeyOK(bic[6:9], account)
}

// WithControlKey returns account with its control key (digit 9) set so
// that ValidAccount takes it at bic, for making accounts of any currency
// or kind that pass the check; false when no digit does (a malformed
// account or BIC).
func WithControlKey(account, bic string) (string, bool) {
	if len(account) != 20 {
		return "", false
	}
	for k := byte('0'); k <= '9'; k++ {
		if a := account[:8] + string(k) + account[9:]; ValidAccount(a, bic) {
			return a, true
		}
	}
	return "", false
}

// BankOfRussiaDivision reports whether a valid BIC is a Bank of Russia
// institution's: its digits 7–9, the participant's number within the
// region, are 000 (a main office or RKC), 001 or 002. No credit institution
// has those (theirs are 050–999), and banks' own budget controls take all
// three as the Bank of Russia's. An account held there takes "0" + BIC
// digits 5–6 as its conditional bank number in the key (§5.4: an account
// at a Bank of Russia division/RKC), as the reference's correspondent
// account 30101810800000000746 at BIC 049805000 does.
func BankOfRussiaDivision(bic string) bool {
	return bic[6] == '0' && bic[7] == '0' && '0' <= bic[8] && bic[8] <= '2'
}

// ValidCorrAccount checks an account held at a Bank of Russia division
// (correspondent `30101…` or ЕКС `40102…`): prefix "0" + BIC digits 5–6.
func ValidCorrAccount(account, bic string) bool {
	if len(account) != 20 || !allDigits(account) || !ValidBIC(bic) {
		return false
	}
	return accountKeyOK("0"+bic[4:6], account)
}

// uinFormatOK checks the shape of a UIN without its check digit: `0`, or
// 4, 20 or 25 digits not all zeros (§5.5).
func uinFormatOK(s string) bool {
	if s == "0" {
		return true
	}
	n := len(s)
	return allDigits(s) && !allZero(s) && (n == 4 || n == 20 || n == 25)
}

// ValidUIN checks a UIN/UIP (§5.5): `0` (none), or 20/25 digits whose last
// digit is the check digit; vitya's 4-digit form (not `0000`) is accepted.
func ValidUIN(s string) bool {
	if s == "0" {
		return true
	}
	if !allDigits(s) {
		return false
	}
	switch len(s) {
	case 4:
		return s != "0000"
	case 20, 25:
	default:
		return false
	}
	if allZero(s) {
		return false
	}
	return uinCheckDigit(s[:len(s)-1]) == int(s[len(s)-1]-'0')
}

func uinCheckDigit(body string) int {
	sum := func(start int) int {
		t := 0
		for i := 0; i < len(body); i++ {
			t += int(body[i]-'0') * ((start-1+i)%10 + 1)
		}
		return t % 11
	}
	if r := sum(1); r != 10 {
		return r
	}
	if r := sum(3); r != 10 {
		return r
	}
	return 0
}

// individualPrefixes are payee-account prefixes of individuals (§5.7, vitya).
var individualPrefixes = []string{"40803", "40810", "40813", "40817", "40820", "40824", "40826", "40827", "40828",
	"40914", "45815", "45817", "45915", "45917", "47411", "47468", "47603", "47605", "47608", "47609", "47833", "47835",
	"423", "426", "455", "457"}

// PayeeIsIndividual reports whether a payee account belongs to an individual.
func PayeeIsIndividual(account string) bool {
	for _, p := range individualPrefixes {
		if strings.HasPrefix(account, p) {
			return true
		}
	}
	return false
}
