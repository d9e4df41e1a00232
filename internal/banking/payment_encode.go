package banking

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MarshalPayment is json.Marshal(d), byte for byte, without reflection for
// the documents the API stores: every created document is encoded once
// (stored, and spliced into the 201), and encoding/json's reflective walk
// with Amount's MarshalJSON (whose output it validates and compacts) was a
// sixth of a create's CPU in the handler. Strings outside the plain subset
// (HTML characters, quotes, controls, invalid UTF-8, U+2028/9) and amounts
// that are not exact kopecks take encoding/json, so the result never
// differs; a test compares the two on many documents.
func MarshalPayment(d *Payment) ([]byte, error) {
	return marshalPaymentTo(make([]byte, 0, 1024), d)
}

// marshalPaymentTo is MarshalPayment encoding into buf's space (from its
// length), or in a new slice when encoding/json writes it.
func marshalPaymentTo(buf []byte, d *Payment) ([]byte, error) {
	out, ok := appendPayment(buf, d)
	if !ok {
		return json.Marshal(d)
	}
	return out, nil
}

// appendPayment appends d's JSON; ok is false when a value needs
// encoding/json. The helpers take and return the slice rather than
// writing through an encoder pointer: a pointer write costs a write
// barrier while the GC runs, which under load is most of the time.
func appendPayment(out []byte, d *Payment) (_ []byte, ok bool) {
	ok = true
	out = appendStr(out, `{"externalId":`, d.ExternalID, false, &ok)
	out = appendStr(out, `,"number":`, d.Number, true, &ok)
	out = appendStr(out, `,"date":`, d.Date, true, &ok)
	out = appendAmount(out, `,"amount":`, d.Amount, &ok)
	out = appendStr(out, `,"operationCode":`, d.OperationCode, true, &ok)
	out = appendStr(out, `,"deliveryKind":`, d.DeliveryKind, true, &ok)
	out = appendStr(out, `,"priority":`, d.Priority, true, &ok)
	out = appendStr(out, `,"urgencyCode":`, d.UrgencyCode, true, &ok)
	out = appendStr(out, `,"voCode":`, d.VOCode, true, &ok)
	out = appendStr(out, `,"purpose":`, d.Purpose, true, &ok)
	out = appendStr(out, `,"payerName":`, d.PayerName, true, &ok)
	out = appendStr(out, `,"payerInn":`, d.PayerINN, true, &ok)
	out = appendStr(out, `,"payerKpp":`, d.PayerKPP, true, &ok)
	out = appendStr(out, `,"payerAccount":`, d.PayerAccount, true, &ok)
	out = appendStr(out, `,"payerBankBic":`, d.PayerBankBIC, true, &ok)
	out = appendStr(out, `,"payerBankCorrAccount":`, d.PayerBankCorrAccount, true, &ok)
	out = appendStr(out, `,"payeeName":`, d.PayeeName, true, &ok)
	out = appendStr(out, `,"payeeInn":`, d.PayeeINN, true, &ok)
	out = appendStr(out, `,"payeeKpp":`, d.PayeeKPP, true, &ok)
	out = appendStr(out, `,"payeeAccount":`, d.PayeeAccount, true, &ok)
	out = appendStr(out, `,"payeeBankBic":`, d.PayeeBankBIC, true, &ok)
	out = appendStr(out, `,"payeeBankCorrAccount":`, d.PayeeBankCorrAccount, true, &ok)
	out = appendStr(out, `,"incomeTypeCode":`, d.IncomeTypeCode, true, &ok)
	out = appendStr(out, `,"creditContractNumber":`, d.CreditContractNumber, true, &ok)
	if d.IsPaidByCredit != nil {
		out = append(out, `,"isPaidByCredit":`...)
		out = strconv.AppendBool(out, *d.IsPaidByCredit)
	}
	if v := d.VAT; v != nil {
		out = append(out, `,"vat":{`...)
		n := len(out)
		out = appendStr(out, `,"type":`, v.Type, true, &ok)
		out = appendStr(out, `,"rate":`, v.Rate, true, &ok)
		if v.Amount != "" {
			out = appendAmount(out, `,"amount":`, v.Amount, &ok)
		}
		if len(out) > n { // drop the first member's comma
			out = append(out[:n], out[n+1:]...)
		}
		out = append(out, '}')
	}
	if di := d.DepartmentalInfo; di == nil {
		out = append(out, `,"departmentalInfo":null`...)
	} else {
		// An empty member is null, as DepartmentalInfo.MarshalJSON writes it.
		out = appendStrOrNull(out, `,"departmentalInfo":{"drawerStatus101":`, di.DrawerStatus101, &ok)
		out = appendStrOrNull(out, `,"kbk":`, di.KBK, &ok)
		out = appendStrOrNull(out, `,"oktmo":`, di.OKTMO, &ok)
		out = appendStrOrNull(out, `,"reasonCode106":`, di.ReasonCode106, &ok)
		out = appendStrOrNull(out, `,"taxPeriod107":`, di.TaxPeriod107, &ok)
		out = appendStrOrNull(out, `,"docNumber108":`, di.DocNumber108, &ok)
		out = appendStrOrNull(out, `,"docDate109":`, di.DocDate109, &ok)
		out = appendStrOrNull(out, `,"paymentKind110":`, di.PaymentKind110, &ok)
		out = appendStrOrNull(out, `,"uip":`, di.UIP, &ok)
		out = append(out, '}')
	}
	if len(d.DigestSignatures) > 0 {
		out = append(out, `,"digestSignatures":[`...)
		for i, s := range d.DigestSignatures {
			if i > 0 {
				out = append(out, ',')
			}
			out = appendStr(out, `{"base64Encoded":`, s.Base64Encoded, false, &ok)
			out = appendStr(out, `,"certificateUuid":`, s.CertificateUUID, false, &ok)
			out = appendStr(out, `,"signType":`, s.SignType, true, &ok)
			out = append(out, '}')
		}
		out = append(out, ']')
	}
	out = appendStr(out, `,"expirationDate":`, d.ExpirationDate, true, &ok)
	out = appendStr(out, `,"orderNumber":`, d.OrderNumber, true, &ok)
	out = appendStr(out, `,"paymentNumber":`, d.PaymentNumber, true, &ok)
	out = appendStr(out, `,"payeeOrgIdHash":`, d.PayeeOrgIDHash, true, &ok)
	if len(d.LinkedDocs) > 0 {
		out = append(out, `,"linkedDocs":[`...)
		for i, l := range d.LinkedDocs {
			if i > 0 {
				out = append(out, ',')
			}
			out = appendStr(out, `{"docExtId":`, l.DocExtID, false, &ok)
			out = appendStr(out, `,"type":`, l.Type, true, &ok)
			out = append(out, '}')
		}
		out = append(out, ']')
	}
	out = appendStr(out, `,"bankStatus":`, d.BankStatus, true, &ok)
	if d.BankComment == "" { // Comment.MarshalJSON's null
		out = append(out, `,"bankComment":null`...)
	} else {
		out = appendStr(out, `,"bankComment":`, string(d.BankComment), false, &ok)
	}
	out = appendStr(out, `,"crucialFieldsHash":`, d.CrucialFieldsHash, true, &ok)
	out = appendStr(out, `,"signingUrl":`, d.SigningURL, true, &ok)
	return append(out, '}'), ok
}

// appendStr appends key (the member's separator, name and colon, as
// encoding/json writes them) and the string v; an empty v is left out when
// omitEmpty. A string encoding/json would escape clears ok.
func appendStr(out []byte, key, v string, omitEmpty bool, ok *bool) []byte {
	if omitEmpty && v == "" {
		return out
	}
	if !plainJSONString(v) {
		*ok = false
		return out
	}
	out = append(out, key...)
	out = append(out, '"')
	out = append(out, v...)
	return append(out, '"')
}

// appendStrOrNull is appendStr writing an empty v as null.
func appendStrOrNull(out []byte, key, v string, ok *bool) []byte {
	if v == "" {
		out = append(out, key...)
		return append(out, "null"...)
	}
	return appendStr(out, key, v, false, ok)
}

// appendAmount appends an Amount as its MarshalJSON does: null when
// absent, else exact kopecks with two decimals; anything else is
// encoding/json's to validate (ok is cleared).
func appendAmount(out []byte, key string, a Amount, ok *bool) []byte {
	out = append(out, key...)
	if a == "" {
		return append(out, "null"...)
	}
	k, valid := a.Kopecks()
	if !valid {
		*ok = false
		return out
	}
	return appendKopecks(out, k)
}

// appendKopecks appends FormatKopecks(k).
func appendKopecks(out []byte, k int64) []byte {
	out = strconv.AppendInt(out, k/100, 10)
	return append(out, '.', byte('0'+k%100/10), byte('0'+k%10))
}

// plainJSONString reports whether encoding/json writes s between quotes
// unchanged: printable ASCII other than the quote, backslash and the HTML
// characters it escapes, and valid UTF-8 other than U+2028 and U+2029.
func plainJSONString(s string) bool {
	var high byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if jsonEscaped[c] {
			return false
		}
		high |= c
	}
	if high < utf8.RuneSelf {
		return true
	}
	return utf8.ValidString(s) && !strings.Contains(s, "\u2028") && !strings.Contains(s, "\u2029")
}

// jsonEscaped are the bytes encoding/json never copies as they are.
var jsonEscaped = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	for _, c := range `"\<>&` {
		t[c] = true
	}
	return t
}()
