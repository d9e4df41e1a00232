package banking

import (
	"strings"
	"testing"
	"time"

	"partnerapi/internal/gost"
)

func TestParseBankKeyPEM(t *testing.T) {
	k, err := NewBankKey(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	other, err := NewBankKey(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	pemBoth, err := k.MarshalPEM()
	if err != nil {
		t.Fatal(err)
	}
	keyOnly, _ := gost.MarshalPrivateKeyPEM(k.Key)
	for _, tc := range []struct {
		name    string
		data    []byte
		wantErr string
	}{
		{"key then certificate", pemBoth, ""},
		{"certificate then key", append(append([]byte{}, k.Cert.PEM()...), keyOnly...), ""},
		{"no certificate", keyOnly, "no CERTIFICATE"},
		{"no key", k.Cert.PEM(), "no PRIVATE KEY"},
		{"certificate of another key", append(append([]byte{}, keyOnly...), other.Cert.PEM()...), "not the private key's"},
		{"empty", nil, "no PRIVATE KEY"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseBankKeyPEM(tc.data)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Kid != k.Kid || got.Key.D.Cmp(k.Key.D) != 0 {
				t.Fatal("parsed a different key")
			}
		})
	}
}

// The key never reaches a log or a format verb, only its kid.
func TestBankKeyNeverPrinted(t *testing.T) {
	k, err := NewBankKey(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	d := k.Key.D.Text(16)
	for _, s := range []string{k.String(), k.GoString(), k.LogValue().String()} {
		if strings.Contains(s, d) || !strings.Contains(s, k.Kid) {
			t.Fatalf("%q", s)
		}
	}
}
