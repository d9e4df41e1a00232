package banking

import (
	"math"
	"strconv"
	"strings"
)

// JSON lets a number carry an exponent, and Java and Kotlin clients that
// serialise a BigDecimal through Jackson send one (1.5E+3 for 1500), so an
// amount in exponent form is accepted when it is exact in kopecks. It is
// parsed from its decimal digits, never through a float64, which would
// round 0.29e0 or 1234567890123456.78E0 to a neighbouring kopeck.

// amountFault is why an amount literal has no value in kopecks.
type amountFault int

const (
	amountOK      amountFault = iota
	amountSyntax              // not digits, a dot and an exponent
	amountInexact             // a non-zero digit below the kopeck (1e-3, 1.005E0)
	amountRange               // more kopecks than an int64 holds
)

// maxExponent bounds the exponent read; past it every non-zero mantissa
// of a literal a partner can send is out of range or inexact, so the
// exponent's further digits need not be read into a number.
const maxExponent = 1 << 20

// exponentDigits parses an amount in exponent form, mantissa [eE] [+-]
// digits: the mantissa as a plain amount (digits, optionally a dot and at
// least one digit) of any number of fractional digits, since only the
// value must be exact in kopecks (1.505e1 is 15.05). The value is digits ×
// 10^scale kopecks, digits without leading zeros ("" for zero) and scale
// at least 0; what range an amount may have is its caller's to say
// (exponentKopecks: an int64; card limits: 38 digits, ExactLimit).
func exponentDigits(s string) (digits string, scale int, _ amountFault) {
	i := strings.IndexAny(s, "eE")
	if i < 0 {
		return "", 0, amountSyntax
	}
	whole, frac, dot := strings.Cut(s[:i], ".")
	if !allDigits(whole) || dot && !allDigits(frac) {
		return "", 0, amountSyntax
	}
	exp, ok := parseExponent(s[i+1:])
	if !ok {
		return "", 0, amountSyntax
	}
	digits = strings.TrimLeft(whole+frac, "0")
	if digits == "" {
		return "", 0, amountOK // zero in any exponent
	}
	// Trailing zeros of the mantissa may make up for a negative scale
	// (1.500e0 is 150 kopecks).
	scale = exp - len(frac) + 2
	for scale < 0 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
		scale++
	}
	if scale < 0 {
		return "", 0, amountInexact
	}
	return digits, scale, amountOK
}

// exponentKopecks is exponentDigits' value as an int64 of kopecks.
func exponentKopecks(s string) (int64, amountFault) {
	digits, scale, f := exponentDigits(s)
	if f != amountOK || digits == "" {
		return 0, f // zero is taken here; the validation refuses it
	}
	if len(digits)+scale > 19 { // MaxInt64 has 19 digits
		return 0, amountRange
	}
	k, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0, amountRange
	}
	for ; scale > 0; scale-- {
		if k > math.MaxInt64/10 {
			return 0, amountRange
		}
		k *= 10
	}
	return k, amountOK
}

// exponentOrFail is Kopecks of an amount the plain parse cannot take: the
// exponent form's value when it has an exponent, else a failure.
func exponentOrFail(s string) (int64, bool) {
	if !strings.ContainsAny(s, "eE") {
		return 0, false
	}
	k, f := exponentKopecks(s)
	return k, f == amountOK
}

// parseExponent reads [+-]digits, saturating at ±maxExponent.
func parseExponent(s string) (int, bool) {
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if !allDigits(s) {
		return 0, false
	}
	e := 0
	for i := 0; i < len(s) && e < maxExponent; i++ {
		e = e*10 + int(s[i]-'0')
	}
	e = min(e, maxExponent)
	if neg {
		e = -e
	}
	return e, true
}

// isExponent reports whether the amount is written with an exponent.
func (a Amount) isExponent() bool { return strings.ContainsAny(string(a), "eE") }

// inputLen is the length the 18-character rule of reference §5.6 measures:
// the literal as sent without the zeros past its second decimal (15.000 as
// 15.00, the value the Java SDK's @Digits check also strips them to), or
// for an exponent form the plain literal of its value without trailing
// fractional zeros (1.5E+3 as 1500, 1.25e1 as 12.5), so an amount too long
// to send plainly can pass the rule neither by being written short nor
// fail it by being padded. k is what Kopecks read: past the second
// decimal a plain literal has only zeros.
func (a Amount) inputLen(k int64) int {
	if !a.isExponent() {
		if dot := strings.IndexByte(string(a), '.'); dot >= 0 && len(a)-dot > 3 {
			return dot + 3
		}
		return len(a)
	}
	n := len(strconv.FormatInt(k/100, 10))
	switch {
	case k%100 == 0:
		return n
	case k%10 == 0:
		return n + 2
	}
	return n + 3
}

// amountInputFault is why the validation refuses a partner's amount, ""
// when it takes it: a value in kopecks, positive when positive is set,
// within MaxAmountLen. what names the amount in the message.
func amountInputFault(a Amount, what string, positive bool) string {
	k, ok := a.Kopecks()
	if !ok && a.isExponent() {
		if _, f := exponentKopecks(string(a)); f == amountInexact {
			return what + " в экспоненциальной записи должна быть точной в копейках: значение не более чем с 2 знаками после точки"
		}
	}
	if !ok || positive && k <= 0 || a.inputLen(k) > MaxAmountLen {
		if positive {
			return what + " больше 0, не более 2 знаков после точки, не длиннее 18 символов"
		}
		return what + ": не более 2 знаков после точки"
	}
	return ""
}
