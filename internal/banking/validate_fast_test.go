package banking

import (
	"math/big"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// kopecksSplit is Kopecks as it was before the one-pass parser: the
// reference the parser must agree with on every input. An exponent form is
// kopecksRat's.
func kopecksSplit(a Amount) (int64, bool) {
	s := string(a)
	if strings.ContainsAny(s, "eE") {
		return kopecksRat(s)
	}
	if s == "" || strings.ContainsAny(s, "+-") {
		return 0, false
	}
	whole, frac, _ := strings.Cut(s, ".")
	// Zeros past the second decimal change no value (15.000).
	for len(frac) > 2 && frac[len(frac)-1] == '0' {
		frac = frac[:len(frac)-1]
	}
	if !allDigits(whole) || len(frac) > 2 || (strings.Contains(s, ".") && !allDigits(frac)) {
		return 0, false
	}
	for len(frac) < 2 {
		frac += "0"
	}
	k, err := strconv.ParseInt(whole+frac, 10, 64)
	if err != nil {
		return 0, false
	}
	return k, true
}

// accountKeyConcat is accountKeyOK as it was, over the concatenation.
func accountKeyConcat(prefix, account string) bool {
	s := prefix + account
	if len(s) != 23 || !allDigits(s) {
		return false
	}
	w := [3]int{7, 1, 3}
	sum := 0
	for i := 0; i < len(s); i++ {
		sum += int(s[i]-'0') * w[i%3] % 10
	}
	return sum%10 == 0
}

// randomText draws n bytes from alphabet.
func randomText(r *rand.Rand, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

func TestKopecksMatchesSplit(t *testing.T) {
	cases := []string{"", "0", "00", "1", ".", ".5", "5.", "5.0", "5.00", "5.000", "1.2.3", "12345678901234.99",
		"999999999999999999", "99999999999999999", "9999999999999999.9", "92233720368547758", "922337203685477.58",
		"922337203685477.59", "92233720368547758.07", "92233720368547758.08", "0000000000000000000000.1",
		"1000000000000000.00", "0000000000000000.1", "1 ", " 1", "1,5", "+1", "-1", "1e3", "1E3", "١", "12345678901234567.",
		"１", "0.01", "100.5"}
	for _, c := range cases {
		k, ok := Amount(c).Kopecks()
		wk, wok := kopecksSplit(Amount(c))
		if k != wk || ok != wok {
			t.Errorf("Kopecks(%q) = %d,%v; before %d,%v", c, k, ok, wk, wok)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		c := randomText(r, "0123456789..9e-+E", r.IntN(21))
		k, ok := Amount(c).Kopecks()
		wk, wok := kopecksSplit(Amount(c))
		if k != wk || ok != wok {
			t.Fatalf("Kopecks(%q) = %d,%v; before %d,%v", c, k, ok, wk, wok)
		}
	}
}

func TestAccountKeyMatchesConcat(t *testing.T) {
	cases := []struct{ prefix, account string }{
		{"225", "40702810538833411733"}, {"746", "40602810700000000025"}, {"", "22540702810538833411733"},
		{"22540702810538833411733", ""}, {"2a5", "40702810538833411733"}, {"225", "4070281053883341173"}, {"", ""},
	}
	for _, c := range cases {
		if got, want := accountKeyOK(c.prefix, c.account), accountKeyConcat(c.prefix, c.account); got != want {
			t.Errorf("accountKeyOK(%q, %q) = %v; before %v", c.prefix, c.account, got, want)
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 200000 {
		p, a := randomText(r, "0123456789", r.IntN(5)), randomText(r, "0123456789", 18+r.IntN(5))
		if r.IntN(50) == 0 {
			a = a[:len(a)/2] + "x" + a[len(a)/2:]
		}
		if got, want := accountKeyOK(p, a), accountKeyConcat(p, a); got != want {
			t.Fatalf("accountKeyOK(%q, %q) = %v; before %v", p, a, got, want)
		}
	}
}

// amountExpRe is the exponent form Kopecks takes: JSON's number grammar
// without the sign, with leading zeros allowed as in the plain form.
var amountExpRe = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?[eE][+-]?[0-9]+$`)

// kopecksRat is an exponent form's kopecks by math/big: the value times
// 100 must be a whole number that fits an int64. Exponents past a thousand
// are decided without big (10^huge would not finish): the mantissas these
// tests make are far shorter, so only a zero one is exact.
func kopecksRat(s string) (int64, bool) {
	if !amountExpRe.MatchString(s) {
		return 0, false
	}
	i := strings.IndexAny(s, "eE")
	if e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+")); err != nil || e > 1000 || e < -1000 {
		if strings.Trim(s[:i], "0.") == "" {
			return 0, true
		}
		return 0, false
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return 0, false
	}
	r.Mul(r, big.NewRat(100, 1))
	if !r.IsInt() || !r.Num().IsInt64() {
		return 0, false
	}
	return r.Num().Int64(), true
}
