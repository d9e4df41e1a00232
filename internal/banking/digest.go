package banking

import (
	"slices"
	"strings"
	"unsafe"
)

// digestField is one line of a digest: its name and how to read it. amount
// marks the payment's amount, which the builder formats in place.
type digestField[T any] struct {
	name   string
	value  func(*T) string
	amount bool
}

func di(f func(*DepartmentalInfo) string) func(*Payment) string {
	return func(p *Payment) string {
		if p.DepartmentalInfo == nil {
			return ""
		}
		return f(p.DepartmentalInfo)
	}
}

// paymentDigestFields is the payment digest's field list, in the spec's
// order and count (reference §8: 28 lines; the literal list, not the
// alphabetical reading — §15 #1). Kept as data so the order is reviewable.
var paymentDigestFields = []digestField[Payment]{
	{name: "amount", amount: true, value: func(p *Payment) string {
		if k, ok := p.Amount.Kopecks(); ok {
			return FormatKopecks(k)
		}
		return string(p.Amount)
	}},
	{name: "date", value: func(p *Payment) string { return p.Date }},
	{name: "departmentalInfo.docNumber108", value: di(func(d *DepartmentalInfo) string { return d.DocNumber108 })},
	{name: "departmentalInfo.drawerStatus101", value: di(func(d *DepartmentalInfo) string { return d.DrawerStatus101 })},
	{name: "departmentalInfo.kbk", value: di(func(d *DepartmentalInfo) string { return d.KBK })},
	{name: "departmentalInfo.oktmo", value: di(func(d *DepartmentalInfo) string { return d.OKTMO })},
	{name: "departmentalInfo.paymentKind110", value: di(func(d *DepartmentalInfo) string { return d.PaymentKind110 })},
	{name: "departmentalInfo.reasonCode106", value: di(func(d *DepartmentalInfo) string { return d.ReasonCode106 })},
	{name: "departmentalInfo.uip", value: di(func(d *DepartmentalInfo) string { return d.UIP })},
	{name: "externalId", value: func(p *Payment) string { return p.ExternalID }},
	{name: "incomeTypeCode", value: func(p *Payment) string { return p.IncomeTypeCode }},
	{name: "operationCode", value: func(p *Payment) string { return p.OperationCode }},
	{name: "payeeAccount", value: func(p *Payment) string { return p.PayeeAccount }},
	{name: "payeeBankBic", value: func(p *Payment) string { return p.PayeeBankBIC }},
	{name: "payeeBankCorrAccount", value: func(p *Payment) string { return p.PayeeBankCorrAccount }},
	{name: "payeeInn", value: func(p *Payment) string { return p.PayeeINN }},
	{name: "payeeKpp", value: func(p *Payment) string { return p.PayeeKPP }},
	{name: "payeeName", value: func(p *Payment) string { return p.PayeeName }},
	{name: "payerAccount", value: func(p *Payment) string { return p.PayerAccount }},
	{name: "payerBankBic", value: func(p *Payment) string { return p.PayerBankBIC }},
	{name: "payerBankCorrAccount", value: func(p *Payment) string { return p.PayerBankCorrAccount }},
	{name: "payerInn", value: func(p *Payment) string { return p.PayerINN }},
	{name: "payerKpp", value: func(p *Payment) string { return p.PayerKPP }},
	{name: "payerName", value: func(p *Payment) string { return p.PayerName }},
	{name: "priority", value: func(p *Payment) string { return p.Priority }},
	{name: "purpose", value: func(p *Payment) string { return p.Purpose }},
	{name: "voCode", value: func(p *Payment) string { return p.VOCode }},
	{name: "creditContractNumber", value: func(p *Payment) string { return p.CreditContractNumber }},
}

// limitDigestFields is the card-limit application digest's field list
// (reference §8). Its literal order is already alphabetical, so the order
// option leaves it as it is.
var limitDigestFields = []digestField[LimitChange]{
	{name: "businessCardId", value: func(l *LimitChange) string { return l.BusinessCardID }},
	{name: "code", value: func(l *LimitChange) string { return l.Code }},
	{name: "externalId", value: func(l *LimitChange) string { return l.ExternalID }},
	{name: "limit", value: func(l *LimitChange) string {
		if s, err := FormatLimit(l.Limit); err == nil {
			return s
		}
		return string(l.Limit)
	}},
}

// The alphabetical lists are sorted once, here, so the option costs a
// digest nothing but the choice of list.
var (
	paymentDigestFieldsByName = byName(paymentDigestFields)
	limitDigestFieldsByName   = byName(limitDigestFields)
)

func byName[T any](fields []digestField[T]) []digestField[T] {
	sorted := slices.Clone(fields)
	slices.SortFunc(sorted, func(a, b digestField[T]) int { return strings.Compare(a.name, b.name) })
	return sorted
}

// Payment builds the text a payment's signers sign (reference §8): one
// `name=value` line per listed field, amount with two decimals, the rest as
// sent, lines ordered, separated and kept or dropped as f says. This is the
// one place the digest is built: creation, sign-later, GET …/digest and the
// crucialFieldsHash all call it with the server's format. It is on every
// create, so the loop is written out here rather than through a line
// writer whose methods the compiler does not inline: each option costs at
// most one well-predicted branch per line.
func (f DigestFormat) Payment(p *Payment) string {
	// The names alone take ~520 bytes; one allocation covers a typical
	// document, and the string is that allocation (as strings.Builder's is).
	b := f.appendPayment(make([]byte, 0, 1024), p)
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// appendPayment is Payment appending the text to b, so a create can build
// it in a pooled buffer: the text lives only while the create checks its
// signatures and hashes it, and a fresh kilobyte per create was the
// largest allocation of the handler stack.
func (f DigestFormat) appendPayment(b []byte, p *Payment) []byte {
	fields := paymentDigestFields
	if f.Alphabetical {
		fields = paymentDigestFieldsByName
	}
	// The separator is written a byte at a time: as a string it was a
	// copy call per line, ~10% of the default digest's time.
	crlf, drop := f.CRLF, f.DropEmpty
	lines := 0
	for i := range fields {
		fd := &fields[i]
		// The amount is formatted in place: through its value function it
		// was a string allocated for every document only to be copied
		// here. A formatted amount is never empty, so it is never dropped.
		if fd.amount {
			if k, ok := p.Amount.Kopecks(); ok {
				if lines > 0 {
					if crlf {
						b = append(b, '\r')
					}
					b = append(b, '\n')
				}
				lines++
				b = append(b, fd.name...)
				b = append(b, '=')
				b = appendKopecks(b, k)
				continue
			}
		}
		v := fd.value(p)
		if drop && v == "" {
			continue
		}
		if lines > 0 {
			if crlf {
				b = append(b, '\r')
			}
			b = append(b, '\n')
		}
		lines++
		b = append(b, fd.name...)
		b = append(b, '=')
		b = append(b, v...)
	}
	if f.Trailing && lines > 0 {
		if crlf {
			b = append(b, '\r')
		}
		b = append(b, '\n')
	}
	return b
}

// Limit builds the text a card-limit application's signatures cover
// (reference §8): businessCardId, code, externalId and limit with two
// decimals, as f says. It is the one place this text is built.
func (f DigestFormat) Limit(l LimitChange) string {
	fields := limitDigestFields
	if f.Alphabetical {
		fields = limitDigestFieldsByName
	}
	sep := "\n"
	if f.CRLF {
		sep = "\r\n"
	}
	var b strings.Builder
	b.Grow(128)
	lines := 0
	for i := range fields {
		v := fields[i].value(&l)
		if v == "" && f.DropEmpty {
			continue
		}
		if lines > 0 {
			b.WriteString(sep)
		}
		lines++
		b.WriteString(fields[i].name)
		b.WriteByte('=')
		b.WriteString(v)
	}
	if f.Trailing && lines > 0 {
		b.WriteString(sep)
	}
	return b.String()
}

// CrucialFieldsHash is the bank-computed hash of the signed fields: the
// SHA-256 of the payment's digest text in format f, hex. It follows the
// format because a client checks it against the digest it signs.
func (f DigestFormat) CrucialFieldsHash(d *Payment) string { return digestHash(f.Payment(d)) }

// PaymentDigest is the payment's digest in the default format
// (DigestFormat's zero value). Services build theirs with the configured
// format instead (PaymentConfig.Digest).
func PaymentDigest(p *Payment) string { return DigestFormat{}.Payment(p) }

// LimitDigest is the card-limit application's digest in the default format.
func LimitDigest(l LimitChange) string { return DigestFormat{}.Limit(l) }

// CrucialFieldsHash is the crucialFieldsHash in the default format.
func CrucialFieldsHash(d *Payment) string { return DigestFormat{}.CrucialFieldsHash(d) }
