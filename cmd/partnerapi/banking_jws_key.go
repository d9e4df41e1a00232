package main

import (
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/banking/bankkeys"
)

// bankKey is the bank's signing key (banking.BankKey): --banking-jws-key's
// PEM file when given, so that every process sharing one PostgreSQL signs
// alike; else the data directory's key file, generated on first use and
// reused on every restart.
func bankKey(flagValue, dataDir string) (*banking.BankKey, error) {
	if flagValue != "" {
		k, err := bankkeys.LoadBankKey(flagValue)
		if err != nil {
			return nil, fmt.Errorf("--banking-jws-key: %w", err)
		}
		return k, nil
	}
	if dataDir == "" {
		// No data directory (an in-process bench on PostgreSQL): a key for
		// this process only, rather than a key file in the working directory.
		return banking.NewBankKey(time.Now())
	}
	return bankkeys.EnsureBankKey(filepath.Join(dataDir, bankkeys.BankKeyFile), time.Now())
}

// idTokenIssuer is the iss of id_tokens and user-info JWTs.
const idTokenIssuer = "partnerapi"

// idTokenSigner signs id_tokens and user-info JWTs with alg: the bank's
// GOST key (reference §3), or an RSA key for RS256 (§15 #12), kept like
// the bank's key: --banking-id-token-rsa-key's PEM file when given, else
// the data directory's, generated on first use and reused after.
func idTokenSigner(alg, rsaFlag, dataDir string, key *banking.BankKey) (*banking.IDTokenSigner, error) {
	switch alg {
	case "", banking.IDTokenGOST:
		return banking.NewIDTokenSigner(idTokenIssuer, key), nil
	case banking.IDTokenRS256:
	default:
		return nil, fmt.Errorf("--banking-id-token-alg must be %s or %s, got %q", banking.IDTokenGOST, banking.IDTokenRS256, alg)
	}
	var rk *rsa.PrivateKey
	var err error
	switch {
	case rsaFlag != "":
		if rk, err = bankkeys.LoadIDTokenRSAKey(rsaFlag); err != nil {
			return nil, fmt.Errorf("--banking-id-token-rsa-key: %w", err)
		}
	case dataDir == "":
		// No data directory (an in-process bench on PostgreSQL): a key
		// for this process only, as bankKey does.
		if rk, err = banking.NewIDTokenRSAKey(); err != nil {
			return nil, err
		}
	default:
		if rk, err = bankkeys.EnsureIDTokenRSAKey(filepath.Join(dataDir, bankkeys.IDTokenRSAKeyFile)); err != nil {
			return nil, fmt.Errorf("id_token RSA key: %w", err)
		}
	}
	return banking.NewRS256IDTokenSigner(idTokenIssuer, rk), nil
}

const bankingJWSCertificateUsage = `usage: partnerapi banking jws-certificate [--banking-jws-key FILE] [--data-dir DIR]
  prints the bank's certificate (PEM) that verifies its JWS answers and id_tokens`

// runBankingJWSCertificate is `partnerapi banking jws-certificate`: the
// certificate partners verify the bank's signatures with, from the same
// key the server uses (made now if the server has not run yet, so the
// server then uses the same one). Only the certificate is printed.
func runBankingJWSCertificate(_ context.Context, args []string, getenv func(string) string, sio stdio) error {
	fs := flag.NewFlagSet("banking jws-certificate", flag.ContinueOnError)
	var store storeConfig
	store.register(fs)
	keyFile := fs.String("banking-jws-key", "", "PEM file with the bank's JWS private key and certificate (default: "+bankkeys.BankKeyFile+" in the data directory)")
	if err := parseFlags(fs, args, getenv); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return errors.New(bankingJWSCertificateUsage)
	}
	k, err := bankKey(*keyFile, store.DataDir)
	if err != nil {
		return err
	}
	_, err = sio.out.Write(k.Cert.PEM())
	return err
}

const bankingIDTokenKeyUsage = `usage: partnerapi banking id-token-key [--banking-id-token-rsa-key FILE] [--data-dir DIR]
  prints the public key (PEM) that verifies RS256 id_tokens and user-info JWTs (--banking-id-token-alg RS256)`

// runBankingIDTokenKey is `partnerapi banking id-token-key`: the RSA public
// key partners verify RS256 id_tokens with, from the key the server uses
// (made now if the server has not run yet, so the server then uses the
// same one). Its kid is the key's RFC 7638 thumbprint, which a JOSE
// library computes from the key itself. Only the public key is printed.
func runBankingIDTokenKey(_ context.Context, args []string, getenv func(string) string, sio stdio) error {
	fs := flag.NewFlagSet("banking id-token-key", flag.ContinueOnError)
	var store storeConfig
	store.register(fs)
	keyFile := fs.String("banking-id-token-rsa-key", "", "PEM file with the RSA private key of RS256 id_tokens (default: "+bankkeys.IDTokenRSAKeyFile+" in the data directory)")
	if err := parseFlags(fs, args, getenv); err != nil {
		return err
	}
	if fs.NArg() > 0 || store.DataDir == "" && *keyFile == "" {
		return errors.New(bankingIDTokenKeyUsage)
	}
	s, err := idTokenSigner(banking.IDTokenRS256, *keyFile, store.DataDir, nil)
	if err != nil {
		return err
	}
	der, err := x509.MarshalPKIXPublicKey(&s.RSA.PublicKey)
	if err != nil {
		return err
	}
	_, err = sio.out.Write(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	return err
}
