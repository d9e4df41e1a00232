package banking

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestPaymentDigestGolden(t *testing.T) {
	budget := validPayment()
	budget.Amount = "100"
	budget.PayeeName, budget.PayeeINN, budget.PayeeKPP = "Казначейство России (ФНС России)", "7727406020", "770701001"
	budget.PayeeAccount, budget.PayeeBankBIC, budget.PayeeBankCorrAccount = "03100643000000018500", "017003983", "40102810445370000059"
	budget.DepartmentalInfo = &DepartmentalInfo{DrawerStatus101: "01", KBK: "18201061201010000510", OKTMO: "0",
		ReasonCode106: "0", TaxPeriod107: "0", DocNumber108: "0", DocDate109: "0", UIP: "0"}
	for _, tc := range []struct {
		name string
		p    Payment
	}{
		{"payments_digest_plain", validPayment()},
		{"payments_digest_budget", budget},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := PaymentDigest(&tc.p)
			if n := strings.Count(got, "\n") + 1; n != 28 || strings.HasSuffix(got, "\n") {
				t.Fatalf("digest has %d lines (trailing newline %v), want 28 and none", n, strings.HasSuffix(got, "\n"))
			}
			path := filepath.Join("testdata", tc.name+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Fatalf("digest differs from %s:\n%s", path, got)
			}
		})
	}
}

// The order of signatures and the bank's read-only fields do not change the
// digest (reference §8).
func TestPaymentDigestIgnoresBankFields(t *testing.T) {
	p := validPayment()
	a := PaymentDigest(&p)
	p.BankStatus, p.BankComment = StatusImplemented, "x"
	p.DigestSignatures = []DigestSignature{{CertificateUUID: "a"}, {CertificateUUID: "b"}}
	if PaymentDigest(&p) != a {
		t.Fatal("digest depends on bank fields or signatures")
	}
}

// FuzzAmountKopecks: Kopecks never goes negative, what it reads formats
// back to the same kopecks, and it agrees with kopecksSplit, the plain
// parser it replaced and math/big for exponent forms.
func FuzzAmountKopecks(f *testing.F) {
	for _, s := range []string{"1", "1.5", "0.01", "1e3", "-1", "99999999999999999", "", "1.5E+3", "1e-3", "15005e-1",
		"1.505e1", "1234567890123456.78E0", "1e400", "0e-5", "9223372036854775807e-2", "15.000", "1.50000", "15.001",
		"15.0010", "0.000", "92233720368547758.070", "1.", ".500"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, ok := Amount(s).Kopecks()
		if wk, wok := kopecksSplit(Amount(s)); k != wk || ok != wok {
			t.Fatalf("Kopecks(%q) = %d,%v; reference %d,%v", s, k, ok, wk, wok)
		}
		if !ok {
			return
		}
		if k < 0 {
			t.Fatalf("%q -> %d", s, k)
		}
		back, ok2 := Amount(FormatKopecks(k)).Kopecks()
		if !ok2 || back != k {
			t.Fatalf("round trip %q -> %d -> %q", s, k, FormatKopecks(k))
		}
	})
}

func FuzzValidators(f *testing.F) {
	f.Add("7707083893", "18210102010011000116", "40702810538833411733", "044525225")
	f.Fuzz(func(t *testing.T, inn, uin, acc, bic string) {
		_ = ValidINN(inn)
		_ = ValidUIN(uin)
		_ = ValidAccount(acc, bic)
		_ = ValidCorrAccount(acc, bic)
		_ = ValidKPP(inn)
	})
}

// FuzzPaymentJSON feeds arbitrary bodies through the decoding, validation
// and digest path the create handler uses: no panic, and a decoded document
// always digests to exactly 28 lines.
func FuzzPaymentJSON(f *testing.F) {
	f.Add([]byte(`{"externalId":"0f8fad5b-d9cb-469f-a165-70867728950e","amount":1.5,"departmentalInfo":{"kbk":"1"}}`))
	f.Add([]byte(`{"amount":"1"}`))
	f.Add([]byte(`{"amount":1e400,"purpose":"a\nb"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var p Payment
		if json.Unmarshal(body, &p) != nil {
			return
		}
		err := ValidatePayment(&p, time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
		_, _ = CheckDepartmentalInfo(p.DepartmentalInfo, time.Now())
		d := PaymentDigest(&p)
		if err == nil && strings.Count(d, "\n") != 27 {
			t.Fatalf("digest of %s has %d lines", body, strings.Count(d, "\n")+1)
		}
	})
}

// BenchmarkPaymentDigest is the digest every create builds, in the default
// format and in one with every option switched, which must cost about the
// same: the options choose among precomputed lists and separators.
func BenchmarkPaymentDigest(b *testing.B) {
	for _, f := range []DigestFormat{{}, {Alphabetical: true, CRLF: true, DropEmpty: true, Trailing: true}} {
		b.Run(f.String(), func(b *testing.B) {
			p := validPayment()
			b.ReportAllocs()
			for b.Loop() {
				_ = f.Payment(&p)
			}
		})
	}
}
