package banking

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// decodeSeeds are bodies in and just outside DecodePaymentFast's subset.
var decodeSeeds = []string{
	`{"externalId":"5ea7e000-0000-4000-8000-000000000001","date":"2026-11-23","amount":1500.50,"operationCode":"01","priority":"5",` +
		`"purpose":"Оплата по счёту, без НДС","payerName":"ООО Песочница","payerInn":"7700000000","payerAccount":"40702810000000000001",` +
		`"payerBankBic":"044525000","payerBankCorrAccount":"30101810000000000000","payeeName":"АО Лютик","payeeInn":"7830002293",` +
		`"payeeAccount":"40602810700000000025","payeeBankBic":"049805746","payeeBankCorrAccount":"30101810800000000746",` +
		`"digestSignatures":[{"base64Encoded":"MIIB","certificateUuid":"c1"}]}`,
	` { "externalId" : "a" , "amount" : -0.5e+3 , "isPaidByCredit" : false , "vat" : { "type" : "INCLUDED" , "rate" : "20" , "amount" : 1.75 } ,
	  "departmentalInfo" : { "drawerStatus101" : "01" , "kbk" : "18210102010011000110" , "oktmo" : "45000000" , "reasonCode106" : "ТП" ,
	  "taxPeriod107" : "МС.01.2026" , "docNumber108" : "0" , "docDate109" : "0" , "paymentKind110" : "" , "uip" : "0" } ,
	  "digestSignatures" : [ { "base64Encoded" : "x" , "certificateUuid" : "y" , "signType" : "SOLE" } , {} ] } ` + "\n",
	`{"number":"7","deliveryKind":"electronic","urgencyCode":"","voCode":"10100","payerKpp":"770001001","payeeKpp":null,` +
		`"incomeTypeCode":"1","creditContractNumber":"c","isPaidByCredit":true,"expirationDate":"2026-12-01","orderNumber":"o",` +
		`"paymentNumber":"p","payeeOrgIdHash":"h","linkedDocs":[{"docExtId":"5ea7e000-0000-4000-8000-000000000002","type":"INVOICE"},{"docExtId":"d"}],` +
		`"bankStatus":"NEW","bankComment":"","crucialFieldsHash":"ff","signingUrl":"u"}`,
	`{"amount":null,"vat":null,"departmentalInfo":null,"digestSignatures":null,"isPaidByCredit":null,"linkedDocs":null}`,
	`{"digestSignatures":[],"linkedDocs":[ ]}`,
	`{}`,
	// Outside the subset: encoding/json decides, including its errors.
	`{"ExternalId":"case-folded key"}`,
	`{"externalId":"a","externalId":"b"}`,
	`{"vat":{"rate":"1"},"vat":{"type":"2"}}`,
	`{"unknown":1}`,
	`{"purpose":"tab\tescaped \u0041"}`,
	"{\"purpose\":\"bad utf-8 \xff\"}",
	`{"amount":"1500.50"}`,
	`{"externalId":12}`,
	`{"amount":01}`,
	`{"amount":1.}`,
	`{"amount":-}`,
	`{"digestSignatures":[null]}`,
	`{"digestSignatures":[{},]}`,
	`{"externalId":"a",}`,
	`{"externalId":"a"} x`,
	`null`,
	`[]`,
	``,
	`{"isPaidByCredit":tru}`,
	`{"vat":{"amount":1e5,"amount":2}}`,
	`{"linkedDocs":[null]}`,
	`{"linkedDocs":[{"docExtId":"a","docExtId":"b"}]}`,
	`{"linkedDocs":[{"docExtId":"a","kind":"b"}]}`,
	`{"linkedDocs":{"docExtId":"a"}}`,
	`{"linkedDocs":[{"type":1}]}`,
}

// TestDecodePaymentFast pins that the bodies partners send take the fast
// path and decode as encoding/json decodes them, and that every body outside
// the subset is refused untouched, so encoding/json still answers it.
func TestDecodePaymentFast(t *testing.T) {
	for i, body := range decodeSeeds {
		inSubset := i < 6
		var got Payment
		if DecodePaymentFast([]byte(body), &got) != inSubset {
			t.Fatalf("seed %d %q: fast path taken = %v, want %v", i, body, !inSubset, inSubset)
		}
		if !inSubset {
			if !reflect.DeepEqual(got, Payment{}) {
				t.Fatalf("seed %d: refused body left %+v", i, got)
			}
			continue
		}
		var want Payment
		if err := json.Unmarshal([]byte(body), &want); err != nil {
			t.Fatalf("seed %d: encoding/json: %v", i, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("seed %d:\n fast %+v\n json %+v", i, got, want)
		}
	}
}

// FuzzDecodePaymentFast: whenever the fast decoder accepts a body,
// encoding/json accepts it too and decodes the same value; when it refuses,
// it leaves the payment untouched.
func FuzzDecodePaymentFast(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var got Payment
		if !DecodePaymentFast(body, &got) {
			if !reflect.DeepEqual(got, Payment{}) {
				t.Fatalf("refused %q but left %+v", body, got)
			}
			return
		}
		var want Payment
		if err := json.Unmarshal(body, &want); err != nil {
			t.Fatalf("fast path accepted %q, encoding/json refuses it: %v", body, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\n fast %+v\n json %+v", body, got, want)
		}
	})
}

func BenchmarkDecodePayment(b *testing.B) {
	body := []byte(decodeSeeds[0])
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var p Payment
			if !DecodePaymentFast(body, &p) {
				b.Fatal("refused")
			}
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var p Payment
			if err := json.Unmarshal(body, &p); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// strBytewise is payDecoder.str as it was, one byte at a time: the word
// loop must find the same end and the same refusals.
func strBytewise(s string) (string, int, bool) {
	if s == "" || s[0] != '"' {
		return "", 0, false
	}
	ascii := true
	for j := 1; j < len(s); j++ {
		switch c := s[j]; {
		case c == '"':
			if v := s[1:j]; ascii || utf8.ValidString(v) {
				return v, j + 1, true
			}
			return "", 0, false
		case c == '\\' || c < 0x20:
			return "", 0, false
		case c >= 0x80:
			ascii = false
		}
	}
	return "", 0, false
}

// TestStrWords puts each byte the word loop must stop at, and a
// non-ASCII one, at every position of literals around a word's length.
func TestStrWords(t *testing.T) {
	special := []byte{'"', '\\', 0x00, 0x1f, 0x20, 0x7f, 0x80, 0xd0, 0xff, '!', '#', '[', ']'}
	for n := range 20 {
		for pos := range n {
			for _, c := range special {
				b := []byte(strings.Repeat("a", n))
				b[pos] = c
				lit := `"` + string(b) + `",`
				d := payDecoder{s: lit}
				got, ok := d.str()
				want, end, wantOK := strBytewise(lit)
				if got != want || ok != wantOK || (ok && d.i != end) {
					t.Fatalf("%q: str = %q, %v, end %d; byte by byte %q, %v, end %d", lit, got, ok, d.i, want, wantOK, end)
				}
			}
		}
	}
}
