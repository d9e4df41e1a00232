package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"time"

	"partnerapi/internal/banking"
)

// bankKey is the bank's signing key (banking.BankKey): --banking-jws-key's
// PEM file when given, so that every process sharing one PostgreSQL signs
// alike; else the data directory's key file, generated on first use and
// reused on every restart.
func bankKey(flagValue, dataDir string) (*banking.BankKey, error) {
	if flagValue != "" {
		k, err := banking.LoadBankKeyFile(flagValue)
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
	return banking.EnsureBankKeyFile(filepath.Join(dataDir, banking.BankKeyFile), time.Now())
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
	keyFile := fs.String("banking-jws-key", "", "PEM file with the bank's JWS private key and certificate (default: "+banking.BankKeyFile+" in the data directory)")
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
