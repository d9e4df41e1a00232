package banking

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
)

// encodeSamples are the values the comparison draws every string field
// from: empty, plain ASCII and Cyrillic, and each kind of character
// encoding/json escapes or replaces.
var encodeSamples = []string{"", "", "x", "40702810000000000001", "Оплата по счёту, без НДС", `a"b`, `a\b`, "<b>", "a&b",
	"tab\there", "nl\n", "\x01", "\x7f", "bad\xffutf8", "line\u2028sep", "para\u2029", "emoji 😀", "2026-11-22"}

// amountSamples are amount literals: exact kopecks, and ones only
// encoding/json handles (or refuses).
var amountSamples = []Amount{"", "1", "1500.50", "0.05", "10.5", "007", "1e3", "1.234", "-1", "12345678901234567"}

// fillStrings sets every string field of the struct v points to (and of
// the structs and slices it holds) from the samples.
func fillStrings(rng *rand.Rand, v reflect.Value, samples []string, amounts []Amount) {
	for i := range v.NumField() {
		f := v.Field(i)
		switch {
		case f.Type() == reflect.TypeFor[Amount]():
			f.SetString(string(amounts[rng.IntN(len(amounts))]))
		case f.Kind() == reflect.String:
			f.SetString(samples[rng.IntN(len(samples))])
		case f.Kind() == reflect.Pointer && rng.IntN(2) == 0:
			f.Set(reflect.New(f.Type().Elem()))
			if e := f.Elem(); e.Kind() == reflect.Struct {
				fillStrings(rng, e, samples, amounts)
			} else if e.Kind() == reflect.Bool {
				e.SetBool(rng.IntN(2) == 0)
			}
		case f.Kind() == reflect.Slice:
			if n := rng.IntN(4); n > 0 || rng.IntN(2) == 0 {
				s := reflect.MakeSlice(f.Type(), n, n)
				for j := range n {
					fillStrings(rng, s.Index(j), samples, amounts)
				}
				f.Set(s)
			}
		}
	}
}

// TestMarshalPaymentMatchesEncodingJSON pins that the hand encoder writes
// exactly what json.Marshal writes (or fails where it fails) for many
// random documents, so the stored and answered bytes never change.
func TestMarshalPaymentMatchesEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	fast := 0
	for i := range 20000 {
		var d Payment
		if i%3 == 0 { // a third of plain documents, so the fast path is taken often
			fillStrings(rng, reflect.ValueOf(&d).Elem(), encodeSamples[:5], amountSamples[:6])
		} else {
			fillStrings(rng, reflect.ValueOf(&d).Elem(), encodeSamples, amountSamples)
		}
		want, wantErr := json.Marshal(&d)
		got, gotErr := MarshalPayment(&d)
		if (wantErr != nil) != (gotErr != nil) || !bytes.Equal(got, want) {
			t.Fatalf("document %d:\n got %s (%v)\nwant %s (%v)", i, got, gotErr, want, wantErr)
		}
		if _, ok := appendPayment(nil, &d); ok {
			fast++
		}
	}
	if fast < 1000 {
		t.Fatalf("only %d of the documents took the fast path", fast)
	}
}

// TestMarshalPaymentPlain checks a typical document takes the fast path.
func TestMarshalPaymentPlain(t *testing.T) {
	yes := false
	d := Payment{ExternalID: "e1", Date: "2026-01-02", Amount: "1500.5", OperationCode: "01", Priority: "5",
		Purpose: "Оплата по счёту, без НДС", PayerName: "ООО", IsPaidByCredit: &yes, VAT: &VAT{Rate: "20"},
		DigestSignatures: []DigestSignature{{Base64Encoded: "MIIB", CertificateUUID: SandboxCertSole}}}
	got, ok := appendPayment(nil, &d)
	want, _ := json.Marshal(&d)
	if !ok || !bytes.Equal(got, want) {
		t.Fatalf("fast path %v:\n got %s\nwant %s", ok, got, want)
	}
}

func BenchmarkMarshalPayment(b *testing.B) {
	d := Payment{ExternalID: "5ea7e000-0000-4000-8000-000000000001", Date: "2026-01-02", Amount: "1500.50",
		OperationCode: "01", Priority: "5", Purpose: "Оплата по счёту, без НДС", PayerName: "ООО Песочница",
		PayerINN: "7700000000", PayerAccount: "40702810000000000001", PayerBankBIC: "044525000",
		PayerBankCorrAccount: "30101810000000000000", PayeeName: "АО Лютик", PayeeINN: "7830002293",
		PayeeAccount: "40602810700000000025", PayeeBankBIC: "049805746", PayeeBankCorrAccount: "30101810800000000746"}
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = json.Marshal(&d)
		}
	})
	b.Run("hand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = MarshalPayment(&d)
		}
	})
}
