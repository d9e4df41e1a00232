package bankkeys

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/gost"
)

// ensurers are the two key files, each made by its Ensure function and
// named by the key's id, so one test covers what both promise.
var ensurers = []struct {
	name, file string
	ensure     func(path string) (kid string, err error)
	load       func(path string) (kid string, err error)
}{
	{"bank JWS key", BankKeyFile,
		func(path string) (string, error) {
			k, err := EnsureBankKey(path, time.Now())
			if err != nil {
				return "", err
			}
			return k.Kid, nil
		},
		func(path string) (string, error) {
			k, err := LoadBankKey(path)
			if err != nil {
				return "", err
			}
			return k.Kid, nil
		}},
	{"id_token RSA key", IDTokenRSAKeyFile,
		func(path string) (string, error) {
			k, err := EnsureIDTokenRSAKey(path)
			if err != nil {
				return "", err
			}
			return banking.RSAKeyID(&k.PublicKey), nil
		},
		func(path string) (string, error) {
			k, err := LoadIDTokenRSAKey(path)
			if err != nil {
				return "", err
			}
			return banking.RSAKeyID(&k.PublicKey), nil
		}},
}

// Each key file is made on first use in a directory made for it, private
// to its owner (0600) and with no temporary file left beside it, and is
// read back on every later start: partners pin the bank's certificate and
// verify id_tokens issued before a restart, so a restart must not change
// the key.
func TestEnsureKeyFiles(t *testing.T) {
	for _, e := range ensurers {
		t.Run(e.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "sub", e.file)
			first, err := e.ensure(path)
			if err != nil {
				t.Fatal(err)
			}
			st, err := os.Stat(path)
			if err != nil || st.Mode().Perm() != 0o600 {
				t.Fatalf("key file %v %v, want mode 0600", st, err)
			}
			if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
				t.Fatalf("temporary files left behind: %v", entries)
			}
			again, err := e.ensure(path)
			if err != nil || again != first {
				t.Fatalf("a second start made key %s, the first %s (%v)", again, first, err)
			}
			if loaded, err := e.load(path); err != nil || loaded != first {
				t.Fatalf("loaded key %s, made %s (%v)", loaded, first, err)
			}
		})
	}
}

// Processes starting at once on one data directory agree on one key.
func TestEnsureKeyFilesConcurrentStart(t *testing.T) {
	for _, e := range ensurers {
		t.Run(e.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), e.file)
			const n = 8
			kids := make([]string, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					kid, err := e.ensure(path)
					if err != nil {
						t.Error(err)
					}
					kids[i] = kid
				}()
			}
			wg.Wait()
			for _, kid := range kids {
				if kid != kids[0] {
					t.Fatalf("processes disagree on the key: %v", kids)
				}
			}
		})
	}
}

// A file given by flag that is missing is reported as missing (the Ensure
// functions make a key only then), and one that is not the key is an error
// naming the file without quoting it; neither Ensure function overwrites
// such a file.
func TestKeyFileErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.pem")
	const body = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"
	if err := os.WriteFile(bad, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, e := range ensurers {
		t.Run(e.name, func(t *testing.T) {
			if _, err := e.load(filepath.Join(dir, "missing.pem")); !os.IsNotExist(err) {
				t.Fatalf("missing file: %v", err)
			}
			for what, f := range map[string]func(string) (string, error){"load": e.load, "ensure": e.ensure} {
				if _, err := f(bad); err == nil || !strings.Contains(err.Error(), bad) || strings.Contains(err.Error(), "AAAA") {
					t.Fatalf("%s of a certificate: %v", what, err)
				}
			}
			if data, _ := os.ReadFile(bad); string(data) != body {
				t.Fatalf("the bad file was overwritten: %q", data)
			}
		})
	}
}

// A key made here signs what the reloaded certificate verifies, under a
// kid that is a UUID, as §9.6 requires of a JWS kid.
func TestEnsureBankKeySigns(t *testing.T) {
	path := filepath.Join(t.TempDir(), BankKeyFile)
	first, err := EnsureBankKey(path, time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	again, err := LoadBankKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if !gost.IsCanonicalUUID(first.Kid) || again.Key.D.Cmp(first.Key.D) != 0 || string(again.Cert.Raw) != string(first.Cert.Raw) {
		t.Fatalf("reloaded key differs or kid %q is not a UUID", first.Kid)
	}
	jws, err := first.SignAnswer([]byte(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if j, err := gost.ParseJWS(jws); err != nil || j.Header.Kid != first.Kid || j.Verify(again.Cert) != nil {
		t.Fatalf("JWS does not verify with the reloaded certificate: %v", err)
	}
}
