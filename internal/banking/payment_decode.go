package banking

import "unicode/utf8"

// DecodePaymentFast decodes the usual shape of a payment body into p and
// reports whether it did; on false p is untouched and the caller decodes the
// body with encoding/json, which also produces the error answers. Its subset
// is what partners send: an object whose keys are the exact names of
// Payment's fields (and of the nested blocks), each at most once; strings
// without escapes in valid UTF-8; numbers for amounts; null anywhere a value
// may be. Anything else — an unknown or differently cased key, an escape, a
// wrong type, malformed JSON — is left to encoding/json. Within the subset
// the result is exactly encoding/json's (FuzzDecodePaymentFast compares
// them). encoding/json spent more CPU on a create than the rest of the
// handler: it validates the body in one pass, decodes it in a second, matches
// keys through reflection and allocates every string; here one pass matches
// keys with a switch, and every string is a slice of one copy of the body.
func DecodePaymentFast(body []byte, p *Payment) bool {
	d := payDecoder{s: string(body)}
	var out Payment
	if !d.object(d.paymentField(&out)) {
		return false
	}
	d.space()
	if d.i != len(d.s) {
		return false
	}
	*p = out
	return true
}

// payDecoder walks s; every method returns false at the first byte outside
// the subset, and the decode is then abandoned as a whole.
type payDecoder struct {
	s    string
	i    int
	seen uint64 // fields of the object being decoded, by bit, to refuse duplicates
}

func (d *payDecoder) space() {
	for d.i < len(d.s) {
		switch d.s[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// object decodes {"key": value, ...}, handing each key to field, which
// decodes the value and returns its field's bit (0: not a field of this
// object, which abandons the decode). A key met twice abandons it too:
// encoding/json would merge or overwrite, and that stays its business.
func (d *payDecoder) object(field func(key string) uint64) bool {
	d.space()
	if d.i >= len(d.s) || d.s[d.i] != '{' {
		return false
	}
	d.i++
	outer := d.seen
	d.seen = 0
	defer func() { d.seen = outer }()
	d.space()
	if d.i < len(d.s) && d.s[d.i] == '}' {
		d.i++
		return true
	}
	for {
		key, ok := d.str()
		if !ok {
			return false
		}
		d.space()
		if d.i >= len(d.s) || d.s[d.i] != ':' {
			return false
		}
		d.i++
		d.space()
		seen := d.seen
		bit := field(key)
		if bit == 0 || seen&bit != 0 {
			return false
		}
		d.seen = seen | bit
		d.space()
		if d.i >= len(d.s) {
			return false
		}
		switch d.s[d.i] {
		case ',':
			d.i++
			d.space()
		case '}':
			d.i++
			return true
		default:
			return false
		}
	}
}

// str reads a string literal without escapes: its bytes are the value.
func (d *payDecoder) str() (string, bool) {
	if d.i >= len(d.s) || d.s[d.i] != '"' {
		return "", false
	}
	start := d.i + 1
	// Eight bytes at a time while none of them is a quote, a backslash or
	// a control byte; the byte loop below finds which one it is. A body is
	// mostly string literals, and this loop was its decoding's largest part.
	j, high := start, uint64(0)
	for ; len(d.s)-j >= 8; j += 8 {
		x := le64(d.s[j:])
		if hasByteBelow(x, 0x20) || hasZeroByte(x^(lowBytes*'"')) || hasZeroByte(x^(lowBytes*'\\')) {
			break
		}
		high |= x
	}
	ascii := high&(lowBytes<<7) == 0
	for ; j < len(d.s); j++ {
		c := d.s[j]
		switch {
		case c == '"':
			v := d.s[start:j]
			if !ascii && !utf8.ValidString(v) {
				// encoding/json replaces invalid bytes with U+FFFD.
				return "", false
			}
			d.i = j + 1
			return v, true
		case c == '\\' || c < 0x20:
			return "", false
		case c >= 0x80:
			ascii = false
		}
	}
	return "", false
}

// lowBytes has the low bit of every byte of a word set.
const lowBytes = 0x0101010101010101

// le64 is the little-endian word of s's first eight bytes.
func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// hasZeroByte reports whether a byte of x is zero, exactly: without a zero
// byte nothing borrows and no byte keeps a high bit, and the lowest zero
// byte sets its own.
func hasZeroByte(x uint64) bool { return (x-lowBytes)&^x&(lowBytes<<7) != 0 }

// hasByteBelow reports whether a byte of x is below n (n ≤ 0x80), as
// hasZeroByte does for n = 1.
func hasByteBelow(x uint64, n byte) bool { return (x-lowBytes*uint64(n))&^x&(lowBytes<<7) != 0 }

// null consumes a JSON null if one is next.
func (d *payDecoder) null() bool {
	if len(d.s)-d.i >= 4 && d.s[d.i:d.i+4] == "null" {
		d.i += 4
		return true
	}
	return false
}

// text decodes a string field; null leaves it empty, as encoding/json
// leaves a string it has not set yet.
func (d *payDecoder) text(dst *string) bool {
	if d.null() {
		return true
	}
	v, ok := d.str()
	*dst = v
	return ok
}

// amount decodes an Amount: a JSON number kept as its literal, or null.
func (d *payDecoder) amount(dst *Amount) bool {
	if d.null() {
		return true
	}
	start := d.i
	if !d.number() {
		return false
	}
	*dst = Amount(d.s[start:d.i])
	return true
}

// number consumes a literal of JSON's number grammar:
// -? (0 | [1-9][0-9]*) (.[0-9]+)? ([eE][+-]?[0-9]+)?
func (d *payDecoder) number() bool {
	s, i := d.s, d.i
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = digits(s, i)
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		j := digits(s, i+1)
		if j == i+1 {
			return false
		}
		i = j
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := digits(s, i)
		if j == i {
			return false
		}
		i = j
	}
	d.i = i
	return true
}

func digits(s string, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// boolean decodes a *bool: true, false or null (nil).
func (d *payDecoder) boolean(dst **bool) bool {
	switch {
	case d.null():
		return true
	case len(d.s)-d.i >= 4 && d.s[d.i:d.i+4] == "true":
		d.i += 4
		v := true
		*dst = &v
		return true
	case len(d.s)-d.i >= 5 && d.s[d.i:d.i+5] == "false":
		d.i += 5
		v := false
		*dst = &v
		return true
	}
	return false
}

// fieldBit turns a decode step's outcome into object's field bit.
func fieldBit(bit uint64, decoded bool) uint64 {
	if !decoded {
		return 0
	}
	return bit
}

// paymentField decodes the value of one of Payment's keys into p.
func (d *payDecoder) paymentField(p *Payment) func(string) uint64 {
	return func(key string) uint64 {
		switch key {
		case "externalId":
			return fieldBit(1<<0, d.text(&p.ExternalID))
		case "number":
			return fieldBit(1<<1, d.text(&p.Number))
		case "date":
			return fieldBit(1<<2, d.text(&p.Date))
		case "amount":
			return fieldBit(1<<3, d.amount(&p.Amount))
		case "operationCode":
			return fieldBit(1<<4, d.text(&p.OperationCode))
		case "deliveryKind":
			return fieldBit(1<<5, d.text(&p.DeliveryKind))
		case "priority":
			return fieldBit(1<<6, d.text(&p.Priority))
		case "urgencyCode":
			return fieldBit(1<<7, d.text(&p.UrgencyCode))
		case "voCode":
			return fieldBit(1<<8, d.text(&p.VOCode))
		case "purpose":
			return fieldBit(1<<9, d.text(&p.Purpose))
		case "payerName":
			return fieldBit(1<<10, d.text(&p.PayerName))
		case "payerInn":
			return fieldBit(1<<11, d.text(&p.PayerINN))
		case "payerKpp":
			return fieldBit(1<<12, d.text(&p.PayerKPP))
		case "payerAccount":
			return fieldBit(1<<13, d.text(&p.PayerAccount))
		case "payerBankBic":
			return fieldBit(1<<14, d.text(&p.PayerBankBIC))
		case "payerBankCorrAccount":
			return fieldBit(1<<15, d.text(&p.PayerBankCorrAccount))
		case "payeeName":
			return fieldBit(1<<16, d.text(&p.PayeeName))
		case "payeeInn":
			return fieldBit(1<<17, d.text(&p.PayeeINN))
		case "payeeKpp":
			return fieldBit(1<<18, d.text(&p.PayeeKPP))
		case "payeeAccount":
			return fieldBit(1<<19, d.text(&p.PayeeAccount))
		case "payeeBankBic":
			return fieldBit(1<<20, d.text(&p.PayeeBankBIC))
		case "payeeBankCorrAccount":
			return fieldBit(1<<21, d.text(&p.PayeeBankCorrAccount))
		case "incomeTypeCode":
			return fieldBit(1<<22, d.text(&p.IncomeTypeCode))
		case "creditContractNumber":
			return fieldBit(1<<23, d.text(&p.CreditContractNumber))
		case "isPaidByCredit":
			return fieldBit(1<<24, d.boolean(&p.IsPaidByCredit))
		case "vat":
			return fieldBit(1<<25, d.vat(&p.VAT))
		case "departmentalInfo":
			return fieldBit(1<<26, d.departmentalInfo(&p.DepartmentalInfo))
		case "digestSignatures":
			return fieldBit(1<<27, d.signatures(&p.DigestSignatures))
		case "expirationDate":
			return fieldBit(1<<28, d.text(&p.ExpirationDate))
		case "orderNumber":
			return fieldBit(1<<29, d.text(&p.OrderNumber))
		case "paymentNumber":
			return fieldBit(1<<30, d.text(&p.PaymentNumber))
		case "payeeOrgIdHash":
			return fieldBit(1<<31, d.text(&p.PayeeOrgIDHash))
		case "linkedDocs":
			return fieldBit(1<<36, d.linkedDocs(&p.LinkedDocs))
		case "bankStatus":
			return fieldBit(1<<32, d.text(&p.BankStatus))
		case "bankComment":
			return fieldBit(1<<33, d.text((*string)(&p.BankComment)))
		case "crucialFieldsHash":
			return fieldBit(1<<34, d.text(&p.CrucialFieldsHash))
		case "signingUrl":
			return fieldBit(1<<35, d.text(&p.SigningURL))
		}
		return 0
	}
}

func (d *payDecoder) vat(dst **VAT) bool {
	if d.null() {
		return true
	}
	var v VAT
	decoded := d.object(func(key string) uint64 {
		switch key {
		case "type":
			return fieldBit(1<<0, d.text(&v.Type))
		case "rate":
			return fieldBit(1<<1, d.text(&v.Rate))
		case "amount":
			return fieldBit(1<<2, d.amount(&v.Amount))
		}
		return 0
	})
	*dst = &v
	return decoded
}

func (d *payDecoder) departmentalInfo(dst **DepartmentalInfo) bool {
	if d.null() {
		return true
	}
	var v DepartmentalInfo
	decoded := d.object(func(key string) uint64 {
		switch key {
		case "drawerStatus101":
			return fieldBit(1<<0, d.text(&v.DrawerStatus101))
		case "kbk":
			return fieldBit(1<<1, d.text(&v.KBK))
		case "oktmo":
			return fieldBit(1<<2, d.text(&v.OKTMO))
		case "reasonCode106":
			return fieldBit(1<<3, d.text(&v.ReasonCode106))
		case "taxPeriod107":
			return fieldBit(1<<4, d.text(&v.TaxPeriod107))
		case "docNumber108":
			return fieldBit(1<<5, d.text(&v.DocNumber108))
		case "docDate109":
			return fieldBit(1<<6, d.text(&v.DocDate109))
		case "paymentKind110":
			return fieldBit(1<<7, d.text(&v.PaymentKind110))
		case "uip":
			return fieldBit(1<<8, d.text(&v.UIP))
		}
		return 0
	})
	*dst = &v
	return decoded
}

// signatures decodes the digestSignatures array; [] is an empty, non-nil
// slice, as encoding/json makes it.
func (d *payDecoder) signatures(dst *[]DigestSignature) bool {
	return decodeArray(d, dst, func() (sig DigestSignature, ok bool) {
		ok = d.object(func(key string) uint64 {
			switch key {
			case "base64Encoded":
				return fieldBit(1<<0, d.text(&sig.Base64Encoded))
			case "certificateUuid":
				return fieldBit(1<<1, d.text(&sig.CertificateUUID))
			case "signType":
				return fieldBit(1<<2, d.text(&sig.SignType))
			}
			return 0
		})
		return
	})
}

// linkedDocs decodes the linkedDocs array as signatures decodes its own.
func (d *payDecoder) linkedDocs(dst *[]LinkedDoc) bool {
	return decodeArray(d, dst, func() (doc LinkedDoc, ok bool) {
		ok = d.object(func(key string) uint64 {
			switch key {
			case "docExtId":
				return fieldBit(1<<0, d.text(&doc.DocExtID))
			case "type":
				return fieldBit(1<<1, d.text(&doc.Type))
			}
			return 0
		})
		return
	})
}

// decodeArray decodes a JSON array of objects, each by element: null leaves
// dst as it is, [] is an empty, non-nil slice, as encoding/json makes them;
// anything else (null elements included) is false, left to encoding/json.
// element returns its value rather than filling a pointer: a pointer passed
// through the func value would move every element to the heap.
func decodeArray[T any](d *payDecoder, dst *[]T, element func() (T, bool)) bool {
	if d.null() {
		return true
	}
	if d.i >= len(d.s) || d.s[d.i] != '[' {
		return false
	}
	d.i++
	out := []T{}
	d.space()
	if d.i < len(d.s) && d.s[d.i] == ']' {
		d.i++
		*dst = out
		return true
	}
	for {
		v, ok := element()
		if !ok {
			return false
		}
		out = append(out, v)
		d.space()
		if d.i >= len(d.s) {
			return false
		}
		switch d.s[d.i] {
		case ',':
			d.i++
		case ']':
			d.i++
			*dst = out
			return true
		default:
			return false
		}
	}
}
