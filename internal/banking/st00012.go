package banking

import (
	"partnerapi/internal/jsonmsg"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
)

// ST00012 is the payment-requisites QR payload of GOST R 56042-2014
// (reference §14): "ST0001", an encoding digit, a separator and
// Key=Value pairs joined by the separator. This file encodes and decodes
// the payload; st00012_payment.go fills it from a payment document.

// The encoding digits of the payload header (§14).
const (
	ST00012Windows1251 = '1'
	ST00012UTF8        = '2'
	ST00012KOI8R       = '3'
)

// st00012Prefix is the format id and version that open every payload.
const st00012Prefix = "ST0001"

// ST00012Field is one Key=Value pair of a payload.
type ST00012Field struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// ST00012Payload is a decoded payload: its encoding digit, its separator
// and its pairs in the order they were written.
type ST00012Payload struct {
	Encoding  byte
	Separator byte
	Fields    []ST00012Field
}

// st00012Mandatory are the keys every payload starts with, in this order
// (§14); a reader that finds them elsewhere cannot trust the rest.
var st00012Mandatory = [...]string{"Name", "PersonalAcc", "BankName", "BIC", "CorrespAcc"}

// st00012MaxLen is the longest value, in characters, of each key whose
// limit the reference gives (§14, GOST R 56042-2014 tables 1 and 2). Keys
// of table 3 without a limit here are accepted at any length, since the
// reference asks to check their spelling and lengths before being strict.
var st00012MaxLen = map[string]int{
	"Name": 160, "PersonalAcc": 20, "BankName": 45, "BIC": 9, "CorrespAcc": 20,
	"Sum": 18, "Purpose": 210, "PayeeINN": 12, "PayerINN": 12, "DrawerStatus": 2,
	"KPP": 9, "CBC": 20, "OKTMO": 11, "PaytReason": 2, "TaxPeriod": 10,
	"DocNo": 15, "DocDate": 10, "TaxPaytKind": 2, "UIN": 25,
}

// st00012Separators are the separators a payload may use, the standard's
// `|` first. They are the printable ASCII punctuation marks except `=`,
// which splits a key from its value: one byte in all three encodings, so a
// reader splits before it decodes, and never part of a key. The parser
// accepts exactly this set, so a payload it accepts can be written again.
const st00012Separators = "|#;~^!$%&*+,-./:?@_`'\"()<>[]{}\\"

// ST00012Error is a payload that cannot be written or read. Field names
// the offending key ("" for the header); the service reports the payment
// field the key comes from.
type ST00012Error struct {
	Field  string
	Reason string
}

func (e *ST00012Error) Error() string {
	if e.Field == "" {
		return "ST00012: " + e.Reason
	}
	return "ST00012 " + e.Field + ": " + e.Reason
}

func st00012Err(field, reason string) *ST00012Error {
	return &ST00012Error{Field: jsonmsg.Echo(field), Reason: reason}
}

// checkST00012Fields applies the rules both directions share: the
// mandatory keys first and in order with values, keys of Latin letters and
// each once, values within their limits and Sum in digits. The writer
// refuses what the reader would refuse, so every payload built is read back.
func checkST00012Fields(fields []ST00012Field) error {
	if len(fields) < len(st00012Mandatory) {
		return st00012Err(st00012Mandatory[min(len(fields), len(st00012Mandatory)-1)], "обязательный реквизит отсутствует")
	}
	seen := make(map[string]bool, len(fields))
	for i, f := range fields {
		if i < len(st00012Mandatory) {
			if f.Key != st00012Mandatory[i] {
				return st00012Err(st00012Mandatory[i], "обязательный реквизит должен быть "+strconv.Itoa(i+1)+"-м")
			}
			if f.Value == "" {
				return st00012Err(f.Key, "обязательный реквизит пуст")
			}
		}
		if !st00012Key(f.Key) {
			return st00012Err(f.Key, "имя реквизита должно состоять из латинских букв")
		}
		if seen[f.Key] {
			return st00012Err(f.Key, "реквизит повторяется")
		}
		seen[f.Key] = true
		if n, ok := st00012MaxLen[f.Key]; ok && utf8.RuneCountInString(f.Value) > n {
			return st00012Err(f.Key, "значение длиннее "+strconv.Itoa(n)+" символов")
		}
		if f.Key == "Sum" && (f.Value == "" || strings.Trim(f.Value, "0123456789") != "") {
			return st00012Err(f.Key, "сумма указывается в копейках цифрами")
		}
		if !utf8.ValidString(f.Value) {
			return st00012Err(f.Key, "значение не в UTF-8")
		}
	}
	return nil
}

func st00012Key(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		if c := k[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// EncodeST00012 writes fields as a UTF-8 payload (encoding digit 2). The
// separator is `|` unless a value contains it; then it is the first of the
// other allowed separators that occurs in no value, as §14 requires. A
// value over its limit is an error rather than cut short: a shortened
// account or purpose would pay the wrong thing.
func EncodeST00012(fields []ST00012Field) (string, error) {
	if err := checkST00012Fields(fields); err != nil {
		return "", err
	}
	sep := byte(0)
	for i := 0; i < len(st00012Separators) && sep == 0; i++ {
		c := st00012Separators[i]
		sep = c
		for _, f := range fields {
			if strings.IndexByte(f.Value, c) >= 0 {
				sep = 0
				break
			}
		}
	}
	if sep == 0 {
		return "", st00012Err("", "значения содержат все допустимые разделители")
	}
	var b strings.Builder
	b.WriteString(st00012Prefix)
	b.WriteByte(ST00012UTF8)
	for _, f := range fields {
		b.WriteByte(sep)
		b.WriteString(f.Key)
		b.WriteByte('=')
		b.WriteString(f.Value)
	}
	return b.String(), nil
}

// ParseST00012 reads a payload in any of the three encodings: values of a
// windows-1251 or KOI8-R payload come back in UTF-8. The pairs keep their
// order. One separator after the last pair is tolerated, as some writers
// add it; an empty pair elsewhere, a pair without `=` or a payload that
// breaks the rules of EncodeST00012 is an error.
func ParseST00012(payload []byte) (*ST00012Payload, error) {
	if len(payload) < len(st00012Prefix)+2 || string(payload[:len(st00012Prefix)]) != st00012Prefix {
		return nil, st00012Err("", "полезная нагрузка должна начинаться с ST0001, кода кодировки и разделителя")
	}
	enc, sep := payload[len(st00012Prefix)], payload[len(st00012Prefix)+1]
	var decode func([]byte) (string, error)
	switch enc {
	case ST00012UTF8:
		decode = func(b []byte) (string, error) {
			if !utf8.Valid(b) {
				return "", st00012Err("", "данные не в UTF-8, хотя указана кодировка 2")
			}
			return string(b), nil
		}
	case ST00012Windows1251:
		decode = singleByte(charmap.Windows1251)
	case ST00012KOI8R:
		decode = singleByte(charmap.KOI8R)
	default:
		return nil, st00012Err("", "неизвестный код кодировки "+strconv.Quote(string(enc))+": допустимы 1, 2, 3")
	}
	if strings.IndexByte(st00012Separators, sep) < 0 {
		return nil, st00012Err("", "недопустимый разделитель "+strconv.Quote(string(sep)))
	}
	body := payload[len(st00012Prefix)+2:]
	if n := len(body); n > 0 && body[n-1] == sep {
		body = body[:n-1]
	}
	out := &ST00012Payload{Encoding: enc, Separator: sep}
	for _, pair := range strings.Split(string(body), string(sep)) {
		k, v, ok := strings.Cut(pair, "=")
		if !ok {
			return nil, st00012Err("", "пара без знака «=»: "+strconv.Quote(jsonmsg.Echo(pair)))
		}
		value, err := decode([]byte(v))
		if err != nil {
			return nil, err
		}
		out.Fields = append(out.Fields, ST00012Field{Key: k, Value: value})
	}
	if err := checkST00012Fields(out.Fields); err != nil {
		return nil, err
	}
	return out, nil
}

// singleByte decodes a one-byte Cyrillic code page; every byte has a
// meaning there (or becomes U+FFFD), so it cannot fail.
func singleByte(cm *charmap.Charmap) func([]byte) (string, error) {
	return func(b []byte) (string, error) {
		s, err := cm.NewDecoder().Bytes(b)
		return string(s), err
	}
}

// Get returns the value of key and whether the payload has it.
func (p *ST00012Payload) Get(key string) (string, bool) {
	for _, f := range p.Fields {
		if f.Key == key {
			return f.Value, true
		}
	}
	return "", false
}
