package banking

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"partnerapi/internal/jsonmsg"
)

// FuzzDeserializationFault holds the DESERIALIZATION_FAULT of any body
// encoding/json refuses to the envelope of reference §13 (fields never
// nil, at most the one offending member, every string valid UTF-8 and
// quoted within jsonmsg.Echo's bound), and syntaxErrorPath, the walk that
// names the member whose value holds a syntax error, to two properties:
// a body that is valid JSON has no syntax error, so no path; and a body
// {"k1":{"k2":g whose tail g cannot close k2's object (no quote, comma or
// closing bracket in it) names k2 inside k1, or k1 alone once g held a
// whole value and the error came after it.
func FuzzDeserializationFault(f *testing.F) {
	for _, s := range []string{`{"externalId":"x","amount":"100"}`, `{"departmentalInfo":{"kbk":tru}}`, `{"externalId":`,
		`{"digestSignatures":[{"base64Encoded":"a"},`, `amount=1`, ``, `{"amount":1} x`, `[1]`, `{"a":{"b":{"c":[1,{"d":nul`,
		`{"\u00e9":1..5}`, "{\"\xff\":1e}", `{"vat":{"amount":-}}`} {
		f.Add(s, "departmentalInfo", "kbk", "1..5")
	}
	f.Fuzz(func(t *testing.T, body, k1, k2, g string) {
		var p Payment
		if err := json.Unmarshal([]byte(body), &p); err != nil {
			e := DeserializationFault([]byte(body), err)
			if e.Kind != KindDeserialization || e.Fields == nil || len(e.Fields) > 1 || !utf8.ValidString(e.Message) {
				t.Fatalf("%q: %d %q %#v", body, e.Kind, e.Message, e.Fields)
			}
			for _, field := range e.Fields {
				if !utf8.ValidString(field) || field == "" || field != jsonmsg.Echo(field) {
					t.Fatalf("%q: field %q is not a bounded quote", body, field)
				}
			}
		}
		if json.Valid([]byte(body)) {
			if path := syntaxErrorPath([]byte(body)); path != "" {
				t.Fatalf("valid JSON %q: syntax error at %q", body, path)
			}
		}
		if strings.ContainsAny(g, "\"},]") {
			return
		}
		q1, _ := json.Marshal(k1)
		q2, _ := json.Marshal(k2)
		var d1, d2 string // the keys as a decoder reads them back
		_ = json.Unmarshal(q1, &d1)
		_ = json.Unmarshal(q2, &d2)
		b := "{" + string(q1) + ":{" + string(q2) + ":" + g
		if json.Valid([]byte(b)) {
			t.Fatalf("%q is valid JSON", b) // k2's object is never closed
		}
		if path := syntaxErrorPath([]byte(b)); path != d1+"."+d2 && path != d1 {
			t.Fatalf("%q: syntax error at %q, want %q or %q", b, path, d1+"."+d2, d1)
		}
	})
}
