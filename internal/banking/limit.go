package banking

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"partnerapi/internal/jsonexact"
	"partnerapi/internal/jsonmsg"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

// LimitCodeNonRenew is the only limit code the reference defines.
const LimitCodeNonRenew = "NON_RENEW"

// Limit application statuses (reference §6: card-limit CREATED, EXPORTED).
const (
	LimitCreated    = "CREATED"    // no signatures: a draft awaiting signing in the bank's UI
	LimitPartSigned = "PARTSIGNED" // one of first/second
	LimitExported   = "EXPORTED"   // fully signed: sent to the card system and in force
)

// LimitChange is a BusinessCardLimitChangeRes: the request body and, with
// the bank's fields filled, the response.
type LimitChange struct {
	Code             string            `json:"code"`
	BusinessCardID   string            `json:"businessCardId"`
	ExternalID       string            `json:"externalId"`
	Limit            json.Number       `json:"limit"`
	DigestSignatures []DigestSignature `json:"digestSignatures,omitempty"`
	Date             string            `json:"date,omitempty"`
	Number           string            `json:"number,omitempty"`
	BankStatus       string            `json:"bankStatus,omitempty"`
	BankComment      Comment           `json:"bankComment"`

	OrgID       string    `json:"-"`
	PartnerID   string    `json:"-"`
	ChannelInfo string    `json:"-"`
	CreatedAt   time.Time `json:"-"` // the bank's (possibly sandbox-shifted) time it was accepted
	ExpiresAt   time.Time `json:"-"` // zero: lasts the card's lifetime
	// ExportedAt is when it came into force (EXPORTED): its acceptance for
	// one complete at creation, its last signature for one signed later
	// (Cards.SignLimit); zero while it is not in force.
	ExportedAt time.Time `json:"-"`
	// Roles are the signature roles collected so far, the ones a later
	// signature is checked against (Cards.SignLimit).
	Roles []SignatureRole `json:"-"`
}

// LimitState is the answer of /limits/{externalId}/state.
type LimitState struct {
	BankStatus  string  `json:"bankStatus"`
	BankComment Comment `json:"bankComment"`
	ChannelInfo string  `json:"channelInfo"`
}

// CardLimit is the limit in force on a card at some moment.
type CardLimit struct {
	Amount    string    // two decimals
	ExpiresAt time.Time // zero: until the card expires
}

var (
	uuidRe = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	// A limit has at most two decimals that are not zero: zeros past the
	// second (15.000, a BigDecimal of scale 3) change no value.
	limitRe = regexp.MustCompile(`^(0|[1-9][0-9]{0,35})(\.[0-9]{1,2}0*)?$`)
)

// IsUUID reports whether s is a textual UUID.
func IsUUID(s string) bool { return uuidRe.MatchString(s) }

// maxLimitDigits is a limit's precision, number(38,2) (reference §11).
const maxLimitDigits = 38

// maxLimitText bounds an application's businessCardId and number, in
// characters (the contract's maxLength).
const maxLimitText = 64

// limitKopecks is a limit literal's value as the decimal digits of its
// kopecks, without leading zeros ("" for zero). It takes the forms a
// payment's amount takes (Amount.Kopecks): a plain amount of at most two
// decimals that are not zero, or the exponent form of JSON when it is exact in kopecks
// (1.5E+3), read by the payments' exponentDigits; only the range differs,
// 38 digits here against an int64 of kopecks there.
func limitKopecks(s string) (string, amountFault) {
	if strings.ContainsAny(s, "eE") {
		digits, scale, f := exponentDigits(s)
		if f != amountOK {
			return "", f
		}
		if len(digits)+scale > maxLimitDigits {
			return "", amountRange
		}
		return digits + strings.Repeat("0", scale), amountOK
	}
	if !limitRe.MatchString(s) {
		return "", amountSyntax
	}
	whole, frac, _ := strings.Cut(s, ".")
	return strings.TrimLeft(whole+(frac + "00")[:2], "0"), amountOK
}

// FormatLimit writes a limit amount with exactly two decimals, the form the
// digest and the store use. It accepts what ParseLimitChange validated.
func FormatLimit(n json.Number) (string, error) {
	k, f := limitKopecks(string(n))
	if f != amountOK {
		return "", fmt.Errorf("limit %q: want a non-negative number exact in kopecks, of at most 38 digits", string(n))
	}
	if len(k) < 3 {
		k = strings.Repeat("0", 3-len(k)) + k
	}
	return k[:len(k)-2] + "." + k[len(k)-2:], nil
}

// ParseLimitChange decodes and validates an application body: wrong JSON
// is DESERIALIZATION_FAULT, wrong values VALIDATION_FAULT.
func ParseLimitChange(body []byte) (LimitChange, error) {
	var l LimitChange
	// Member names match exactly, as the bank's do: {"LIMIT":100} is no
	// limit, and next to "limit" it is ignored.
	body = jsonexact.Names(body, &l)
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&l); err != nil {
		e := DeserializationFault(body, err)
		// encoding/json quotes a number literal it cannot read whole
		// (json.Number takes a quoted one), so its text is quoted through
		// jsonmsg.Echo like any other value of the client's.
		e.Message = "Тело запроса не соответствует формату JSON: " + jsonmsg.Echo(err.Error())
		return l, e
	}
	if _, err := dec.Token(); err != io.EOF {
		return l, &Error{Kind: KindDeserialization, Message: "После объекта JSON есть лишние данные", Fields: []string{}}
	}
	// json.Number also takes a quoted number; the contract says number.
	var probe struct {
		Limit json.RawMessage `json:"limit"`
	}
	if json.Unmarshal(body, &probe) == nil && len(probe.Limit) > 0 && probe.Limit[0] == '"' {
		return l, &Error{Kind: KindDeserialization, Message: "Поле limit должно быть числом", Fields: []string{"limit"}}
	}
	v := &Error{Kind: KindValidation, Message: "Объект BusinessCardLimitChangeRes не соответствует модели"}
	bad := func(field, check string) {
		v.FieldNames = append(v.FieldNames, field)
		v.Checks = append(v.Checks, check)
	}
	if l.Code != LimitCodeNonRenew {
		bad("code", "допустимое значение: NON_RENEW")
	}
	// The lengths count characters, as the contract's maxLength does, not
	// the bytes of their UTF-8.
	if strings.TrimSpace(l.BusinessCardID) == "" || utf8.RuneCountInString(l.BusinessCardID) > maxLimitText {
		bad("businessCardId", "обязательное поле, не длиннее 64 символов")
	}
	if !IsUUID(l.ExternalID) {
		bad("externalId", "должен быть UUID")
	}
	if canon, err := FormatLimit(l.Limit); err != nil {
		if _, f := limitKopecks(string(l.Limit)); f == amountInexact {
			bad("limit", "в экспоненциальной записи должно быть точным в копейках: значение не более чем с 2 знаками после точки")
		} else {
			bad("limit", "неотрицательное число, не более двух знаков после запятой")
		}
	} else {
		l.Limit = json.Number(canon)
	}
	// An empty list is not "no signatures": reference §11 and §9.1 give
	// the member 1 or 2 items, and an application without signatures
	// leaves it out (or null) to stay CREATED. More than two are a set the
	// bank does not take, which the verifier answers WORKFLOW_FAULT, as
	// for a payment (§7), not a format fault here.
	if l.DigestSignatures != nil && len(l.DigestSignatures) == 0 {
		bad("digestSignatures", "от одной до двух подписей; без подписей поле не передаётся")
	}
	// The date is checked as a payment's is (ParseDate): the shape alone
	// took 2026-13-01 and 30 February, a document dated on no day.
	if _, ok := ParseDate(l.Date); l.Date != "" && !ok {
		bad("date", "дата в формате YYYY-MM-DD")
	}
	if utf8.RuneCountInString(l.Number) > maxLimitText {
		bad("number", "не длиннее 64 символов")
	}
	if len(v.FieldNames) > 0 {
		return l, v
	}
	// The externalId keeps the client's text: the partner signs it as sent
	// (DigestFormat.Limit) and the answer echoes it. Only the store folds its case,
	// so the same UUID in another case is the same application.
	l.BankStatus, l.BankComment = "", ""
	return l, nil
}

// LimitExpiry is when a limit set at `at` stops: a NON_RENEW limit of zero
// lasts the card's lifetime (zero time); any other amount lasts to the end
// of the calendar day after the day it was set, in the bank's time zone.
func LimitExpiry(amount string, at time.Time, loc *time.Location) time.Time {
	if isZeroAmount(amount) {
		return time.Time{}
	}
	t := at.In(loc)
	return time.Date(t.Year(), t.Month(), t.Day()+2, 0, 0, 0, 0, loc)
}

func isZeroAmount(a string) bool { return strings.Trim(a, "0.") == "" }

// EffectiveLimit is the limit in force at now given the card's applied
// limits, newest in force (ExportedAt) first: the newest one that has not expired. A newer limit
// replaces an older one even when the older would still run, so a
// one-day raise does not resurrect an earlier limit when it ends.
func EffectiveLimit(applied []LimitChange, now time.Time) *CardLimit {
	if len(applied) == 0 {
		return nil
	}
	l := applied[0]
	if !l.ExpiresAt.IsZero() && !now.Before(l.ExpiresAt) {
		return nil
	}
	return &CardLimit{Amount: string(l.Limit), ExpiresAt: l.ExpiresAt}
}
