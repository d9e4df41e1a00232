package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/banking/bankkeys"
	"partnerapi/internal/gost"
)

// bankingJWSCertificate runs `partnerapi banking jws-certificate` and
// parses the PEM it prints.
func bankingJWSCertificate(t *testing.T, args ...string) *gost.Certificate {
	t.Helper()
	var out bytes.Buffer
	if err := runBanking(context.Background(), append([]string{"jws-certificate"}, args...),
		func(string) string { return "" }, stdio{in: strings.NewReader(""), out: &out, err: io.Discard}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "PRIVATE KEY") {
		t.Fatal("jws-certificate printed the private key")
	}
	cert, err := gost.ParseCertificate(out.Bytes())
	if err != nil {
		t.Fatalf("jws-certificate printed %q: %v", out.String(), err)
	}
	return cert
}

// writeBankKeyPEM writes a fresh bank key and certificate as an operator
// would hand them to --banking-jws-key.
func writeBankKeyPEM(t *testing.T) (string, *banking.BankKey) {
	t.Helper()
	k, err := banking.NewBankKey(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	data, err := k.MarshalPEM()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "bank.pem")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, k
}

// The CLI prints the data directory's certificate (making the key once,
// 0600) and, given --banking-jws-key, that file's certificate without
// touching the data directory.
func TestBankingJWSCertificateCLI(t *testing.T) {
	dir := t.TempDir()
	first := bankingJWSCertificate(t, "--data-dir", dir)
	again := bankingJWSCertificate(t, "--data-dir", dir)
	if !bytes.Equal(first.Raw, again.Raw) {
		t.Fatal("a second run printed another certificate")
	}
	st, err := os.Stat(filepath.Join(dir, bankkeys.BankKeyFile))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", st, err)
	}
	keyFile, k := writeBankKeyPEM(t)
	other := t.TempDir()
	if got := bankingJWSCertificate(t, "--data-dir", other, "--banking-jws-key", keyFile); !bytes.Equal(got.Raw, k.Cert.Raw) {
		t.Fatal("--banking-jws-key: another certificate printed")
	}
	if _, err := os.Stat(filepath.Join(other, bankkeys.BankKeyFile)); !os.IsNotExist(err) {
		t.Fatalf("--banking-jws-key still made a key file in the data directory: %v", err)
	}
	for _, bad := range [][]string{{"--banking-jws-key", filepath.Join(dir, "missing.pem")}, {"--data-dir", dir, "extra"}} {
		err := runBanking(context.Background(), append([]string{"jws-certificate"}, bad...),
			func(string) string { return "" }, stdio{in: strings.NewReader(""), out: io.Discard, err: io.Discard})
		if err == nil {
			t.Fatalf("%v: no error", bad)
		}
	}
}
