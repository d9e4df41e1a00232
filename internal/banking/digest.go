package banking

import (
	"strings"
)

// digestField is one line of a digest: its name and how to read it.
type digestField struct {
	name  string
	value func(*Payment) string
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
var paymentDigestFields = []digestField{
	{"amount", func(p *Payment) string {
		if k, ok := p.Amount.Kopecks(); ok {
			return FormatKopecks(k)
		}
		return string(p.Amount)
	}},
	{"date", func(p *Payment) string { return p.Date }},
	{"departmentalInfo.docNumber108", di(func(d *DepartmentalInfo) string { return d.DocNumber108 })},
	{"departmentalInfo.drawerStatus101", di(func(d *DepartmentalInfo) string { return d.DrawerStatus101 })},
	{"departmentalInfo.kbk", di(func(d *DepartmentalInfo) string { return d.KBK })},
	{"departmentalInfo.oktmo", di(func(d *DepartmentalInfo) string { return d.OKTMO })},
	{"departmentalInfo.paymentKind110", di(func(d *DepartmentalInfo) string { return d.PaymentKind110 })},
	{"departmentalInfo.reasonCode106", di(func(d *DepartmentalInfo) string { return d.ReasonCode106 })},
	{"departmentalInfo.uip", di(func(d *DepartmentalInfo) string { return d.UIP })},
	{"externalId", func(p *Payment) string { return p.ExternalID }},
	{"incomeTypeCode", func(p *Payment) string { return p.IncomeTypeCode }},
	{"operationCode", func(p *Payment) string { return p.OperationCode }},
	{"payeeAccount", func(p *Payment) string { return p.PayeeAccount }},
	{"payeeBankBic", func(p *Payment) string { return p.PayeeBankBIC }},
	{"payeeBankCorrAccount", func(p *Payment) string { return p.PayeeBankCorrAccount }},
	{"payeeInn", func(p *Payment) string { return p.PayeeINN }},
	{"payeeKpp", func(p *Payment) string { return p.PayeeKPP }},
	{"payeeName", func(p *Payment) string { return p.PayeeName }},
	{"payerAccount", func(p *Payment) string { return p.PayerAccount }},
	{"payerBankBic", func(p *Payment) string { return p.PayerBankBIC }},
	{"payerBankCorrAccount", func(p *Payment) string { return p.PayerBankCorrAccount }},
	{"payerInn", func(p *Payment) string { return p.PayerINN }},
	{"payerKpp", func(p *Payment) string { return p.PayerKPP }},
	{"payerName", func(p *Payment) string { return p.PayerName }},
	{"priority", func(p *Payment) string { return p.Priority }},
	{"purpose", func(p *Payment) string { return p.Purpose }},
	{"voCode", func(p *Payment) string { return p.VOCode }},
	{"creditContractNumber", func(p *Payment) string { return p.CreditContractNumber }},
}

// PaymentDigest builds the text a payment's signers sign (reference §8):
// one `name=value` line per listed field, absent values as `name=` so the
// line count stays fixed, amount with two decimals, lines joined by "\n"
// with no trailing newline. This is the one place the digest is built:
// creation, sign-later and GET …/digest all call it.
func PaymentDigest(p *Payment) string {
	var b strings.Builder
	b.Grow(1024) // the names alone take ~520 bytes; one allocation covers a typical document
	for i, f := range paymentDigestFields {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(f.name)
		b.WriteByte('=')
		// The amount is formatted in place: through its value function it
		// was a string allocated for every document only to be copied here.
		if f.name == "amount" {
			if k, ok := p.Amount.Kopecks(); ok {
				var buf [24]byte
				b.Write(appendKopecks(buf[:0], k))
				continue
			}
		}
		b.WriteString(f.value(p))
	}
	return b.String()
}
