package main

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"

	"partnerapi/internal/banking"
	"partnerapi/internal/gost"
)

// signDigest signs stdin byte for byte: the digest text is what the bank
// verifies, so not even a trailing newline may be added or removed.
func signDigest(in io.Reader, certFile, keyFile, uuid, signType string, trimNewline bool) (banking.DigestSignature, error) {
	var ds banking.DigestSignature
	rawCert, err := os.ReadFile(certFile)
	if err != nil {
		return ds, fmt.Errorf("--cert: %w", err)
	}
	cert, err := gost.ParseCertificate(rawCert)
	if err != nil {
		return ds, fmt.Errorf("--cert: %w", err)
	}
	rawKey, err := os.ReadFile(keyFile)
	if err != nil {
		return ds, fmt.Errorf("--key: %w", err)
	}
	key, err := gost.ParsePrivateKey(rawKey)
	if err != nil {
		return ds, fmt.Errorf("--key: %w", err)
	}
	if in == nil {
		return ds, errors.New("no digest on stdin")
	}
	digest, err := io.ReadAll(in)
	if err != nil {
		return ds, err
	}
	if trimNewline {
		digest = bytes.TrimSuffix(bytes.TrimSuffix(digest, []byte("\n")), []byte("\r"))
	}
	cms, err := gost.SignDetached(digest, cert, key)
	if err != nil {
		return ds, err
	}
	return banking.DigestSignature{Base64Encoded: base64.StdEncoding.EncodeToString(cms), CertificateUUID: uuid, SignType: signType}, nil
}
