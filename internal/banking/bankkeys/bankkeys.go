// Package bankkeys keeps the bank's signing keys in PEM files: it reads
// the file an operator gives (--banking-jws-key, --banking-id-token-rsa-key)
// and makes the data directory's own on first use. The banking domain
// parses, generates and uses keys but touches no file; this is the one
// place that does.
package bankkeys

import (
	"crypto/rsa"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"partnerapi/internal/banking"
)

// BankKeyFile is the name of the bank's signing key in the data directory
// when no --banking-jws-key is given.
const BankKeyFile = "banking-jws-key.pem"

// IDTokenRSAKeyFile is the name of the RSA key signing RS256 id_tokens in
// the data directory when no --banking-id-token-rsa-key is given.
const IDTokenRSAKeyFile = "banking-id-token-rsa.pem"

// LoadBankKey reads a PEM file made by EnsureBankKey or by an operator
// (e.g. with OpenSSL's GOST engine, banking.md §9.5). A parse error names
// the file but never quotes its contents.
func LoadBankKey(path string) (*banking.BankKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	k, err := banking.ParseBankKeyPEM(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// EnsureBankKey returns the key kept at path, generating and writing it
// first when the file does not exist. Partners pin the bank's certificate,
// so every restart, and every process sharing the data directory, must
// sign with the one key: the file is made once (CreateKeyFile) and only
// read after.
func EnsureBankKey(path string, now time.Time) (*banking.BankKey, error) {
	k, err := LoadBankKey(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return k, err
	}
	k, err = banking.NewBankKey(now)
	if err != nil {
		return nil, err
	}
	data, err := k.MarshalPEM()
	if err != nil {
		return nil, err
	}
	if err := CreateKeyFile(path, data); errors.Is(err, fs.ErrExist) {
		return LoadBankKey(path)
	} else if err != nil {
		return nil, err
	}
	return k, nil
}

// LoadIDTokenRSAKey reads the RS256 key at path (PKCS#8 or PKCS#1 PEM).
func LoadIDTokenRSAKey(path string) (*rsa.PrivateKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	k, err := banking.ParseIDTokenRSAKeyPEM(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// EnsureIDTokenRSAKey returns the RS256 key kept at path, generating and
// writing it (PKCS#8 PEM, 0600) first when the file does not exist, the
// way EnsureBankKey keeps the bank's GOST key: id_tokens issued before a
// restart, or by another process on the same data directory, must still
// verify.
func EnsureIDTokenRSAKey(path string) (*rsa.PrivateKey, error) {
	k, err := LoadIDTokenRSAKey(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return k, err
	}
	k, err = banking.NewIDTokenRSAKey()
	if err != nil {
		return nil, err
	}
	data, err := banking.MarshalIDTokenRSAKeyPEM(k)
	if err != nil {
		return nil, err
	}
	if err := CreateKeyFile(path, data); errors.Is(err, fs.ErrExist) {
		return LoadIDTokenRSAKey(path)
	} else if err != nil {
		return nil, err
	}
	return k, nil
}

// CreateKeyFile writes a new key file at path, mode 0600. The file is
// written whole under a temporary name and then hard-linked into place: a
// link never replaces an existing file, so when two processes start at once
// on one data directory exactly one key wins (the other gets an error
// wrapping fs.ErrExist and reads the winner's), no process ever reads a
// file still being written, and a crash never leaves half a key behind.
// The webhook key file (cmd/partnerapi) is made through it too.
func CreateKeyFile(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	// CreateTemp already makes the file 0600; Chmod keeps that true
	// whatever a future Go or umask does.
	_, werr := tmp.Write(data)
	if err := errors.Join(werr, tmp.Chmod(0o600), tmp.Sync(), tmp.Close()); err != nil {
		return err
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil {
		// The directory entry must reach the disk too, or a crash could
		// lose the key after tokens were signed with it.
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}
