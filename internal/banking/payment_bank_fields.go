package banking

// The bank-field appenders exist for the create answer's hot path: the
// document is encoded once, for the store, and the answer is that stored
// JSON with the bank's own fields (bankStatus, bankComment,
// crucialFieldsHash) appended, rather than a second encoding of the whole
// view. They must write exactly what encoding/json writes for those fields
// of a Payment, which TestAppendBankFields pins.

import (
	"bytes"
	"encoding/json"
	"slices"
)

// appendBankFields returns a copy of doc, the JSON object of a Payment
// without its bank fields, with bankStatus, bankComment and
// crucialFieldsHash added as encoding/json writes them (an empty status or
// hash left out, an empty comment null, strings escaped alike) and the
// Encoder's trailing newline.
func appendBankFields(doc []byte, status, comment, hash string) []byte {
	return appendBankFieldsTo(nil, doc, status, comment, hash)
}

// nullComment is how a document without bank fields ends (MarshalPayment
// writes an empty bankComment as null, and the fields after it are left
// out when empty); the bank fields replace it.
const nullComment = `,"bankComment":null}`

// appendBankFieldsTo is appendBankFields appending to out.
func appendBankFieldsTo(out, doc []byte, status, comment, hash string) []byte {
	out = slices.Grow(out, len(doc)+len(status)+len(comment)*2+128)
	if bytes.HasSuffix(doc, []byte(nullComment)) {
		out = append(out, doc[:len(doc)-len(nullComment)]...)
	} else {
		out = append(out, doc[:len(doc)-1]...)
	}
	if status != "" {
		out = append(out, `,"bankStatus":`...)
		out = appendJSONString(out, status)
	}
	if comment == "" {
		out = append(out, `,"bankComment":null`...)
	} else {
		out = append(out, `,"bankComment":`...)
		out = appendJSONString(out, comment)
	}
	if hash != "" {
		out = append(out, `,"crucialFieldsHash":`...)
		out = appendJSONString(out, hash)
	}
	return append(out, "}\n"...)
}

// appendCreatedFields is appendBankFieldsTo for a create's answer, whose
// hash is a hexHash: hex digits are what encoding/json writes between
// quotes unchanged, so they are copied, and the hash, read in place, stays
// on its caller's stack (through appendJSONString's json.Marshal it would
// move to the heap, one allocation per create).
func appendCreatedFields(out, doc []byte, status, comment string, hash *hexHash) []byte {
	out = appendBankFieldsTo(out, doc, status, comment, "")
	out = append(out[:len(out)-len("}\n")], `,"crucialFieldsHash":"`...)
	out = append(out, hash[:]...)
	return append(out, "\"}\n"...)
}

// appendJSONString appends s as encoding/json encodes a string. Printable
// ASCII that encoding/json leaves alone (statuses, the hex hash) is copied
// between quotes; anything else takes json.Marshal.
func appendJSONString(out []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c > 0x7e || jsonEscaped[c] { // jsonEscaped: payment_encode.go
			v, _ := json.Marshal(s) // a string always encodes
			return append(out, v...)
		}
	}
	out = append(out, '"')
	out = append(out, s...)
	return append(out, '"')
}
