package banking

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"partnerapi/internal/gost"
)

// The bank's key file round-trips, is private to its owner and is reused:
// partners pin its certificate, so a restart must not change it.
func TestBankKeyFile(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	path := filepath.Join(t.TempDir(), "sub", BankKeyFile)
	first, err := EnsureBankKeyFile(path, now)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v, want 0600", st.Mode().Perm())
	}
	again, err := EnsureBankKeyFile(path, now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if again.Kid != first.Kid || again.Key.D.Cmp(first.Key.D) != 0 || string(again.Cert.Raw) != string(first.Cert.Raw) {
		t.Fatal("a second start made a new key")
	}
	if !gost.IsCanonicalUUID(first.Kid) {
		t.Fatalf("kid %q is not a UUID", first.Kid)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("temporary files left behind: %v", entries)
	}
	jws, err := first.SignAnswer([]byte(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	j, err := gost.ParseJWS(jws)
	if err != nil || j.Header.Kid != first.Kid || j.Verify(again.Cert) != nil {
		t.Fatalf("JWS does not verify with the reloaded certificate: %v", err)
	}
}

// Processes starting at once on one data directory agree on one key.
func TestBankKeyFileConcurrentStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), BankKeyFile)
	const n = 8
	kids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, err := EnsureBankKeyFile(path, time.Now())
			if err != nil {
				t.Error(err)
				return
			}
			kids[i] = k.Kid
		}()
	}
	wg.Wait()
	for _, kid := range kids {
		if kid != kids[0] {
			t.Fatalf("processes disagree on the key: %v", kids)
		}
	}
}

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
