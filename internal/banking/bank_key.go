package banking

import (
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"partnerapi/internal/gost"
)

// bankCertValidity is how long a generated bank certificate is valid. A
// partner pins the certificate it was given, so it should outlive any
// deployment rather than expire under one.
const bankCertValidity = 20 * 365 * 24 * time.Hour

// BankKey is the bank's own GOST R 34.10-2012 signing key and its
// self-signed certificate: it signs id_tokens, user-info JWTs and JWS
// answers (reference §1, §3, §9.6). Partners verify with the certificate,
// so the key must be the same across restarts and across the instances
// that share one database: package bankkeys keeps it in a file, this
// package only parses, generates and uses it.
type BankKey struct {
	Key  *gost.PrivateKey
	Cert *gost.Certificate
	// Kid is the certificate's id, the JWS header's kid.
	Kid string
}

// NewBankKey generates a 256-bit key (parameter set TC26 256 A, the one the
// provider's certificates use) and a self-signed certificate for it.
func NewBankKey(now time.Time) (*BankKey, error) {
	key, err := gost.GenerateKey(gost.TC26256A, rand.Reader)
	if err != nil {
		return nil, err
	}
	cert, err := gost.SelfSignedCertificate(key, "partnerapi bank JWS", now.Add(-time.Hour), now.Add(bankCertValidity))
	if err != nil {
		return nil, err
	}
	return &BankKey{Key: key, Cert: cert, Kid: BankCertificateID(cert)}, nil
}

// BankCertificateID is the UUID that names the bank's certificate in a JWS
// kid (which §9.6 requires to be a UUID). It is derived from the
// certificate's Streebog-256 fingerprint rather than stored beside it, so
// every instance given the same PEM file names the key alike, whatever
// serial number the certificate's issuer chose. The version and variant
// bits make it an RFC 9562 version 8 UUID.
func BankCertificateID(cert *gost.Certificate) string {
	sum := gost.Streebog256(cert.Raw)
	b := sum[:16]
	b[6] = b[6]&0x0f | 0x80
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// ParseBankKeyPEM reads a private key ("PRIVATE KEY", PKCS#8) and its
// certificate ("CERTIFICATE"), in either order, from one PEM file. The
// certificate must hold the key's public half: a mismatched pair would sign
// answers nobody can verify. Errors never quote the key material.
func ParseBankKeyPEM(data []byte) (*BankKey, error) {
	var key *gost.PrivateKey
	var cert *gost.Certificate
	for rest := data; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		switch block.Type {
		case "PRIVATE KEY":
			if key != nil {
				return nil, errors.New("more than one PRIVATE KEY block")
			}
			k, err := gost.ParsePrivateKey(block.Bytes)
			if err != nil {
				return nil, fmt.Errorf("private key: %w", err)
			}
			key = k
		case "CERTIFICATE":
			if cert != nil {
				return nil, errors.New("more than one CERTIFICATE block")
			}
			c, err := gost.ParseCertificate(block.Bytes)
			if err != nil {
				return nil, fmt.Errorf("certificate: %w", err)
			}
			cert = c
		default:
			return nil, fmt.Errorf("unexpected PEM block %q (want PRIVATE KEY and CERTIFICATE)", block.Type)
		}
	}
	switch {
	case key == nil:
		return nil, errors.New("no PRIVATE KEY block")
	case cert == nil:
		return nil, errors.New("no CERTIFICATE block")
	case !cert.PublicKey.Equal(key.Public()):
		return nil, errors.New("the certificate is not the private key's")
	}
	return &BankKey{Key: key, Cert: cert, Kid: BankCertificateID(cert)}, nil
}

// MarshalPEM returns the key (PKCS#8, the form OpenSSL's GOST engine reads)
// followed by the certificate, the form ParseBankKeyPEM reads.
func (k *BankKey) MarshalPEM() ([]byte, error) {
	keyPEM, err := gost.MarshalPrivateKeyPEM(k.Key)
	if err != nil {
		return nil, err
	}
	return append(keyPEM, k.Cert.PEM()...), nil
}

// The typ of each kind of JWS the bank's key signs besides id_tokens
// (typ JWT). The one key signs API answers, webhooks and id_tokens, and
// a partner can get any API answer signed, so without a typ telling them
// apart a signed answer (a payment's state, say) could be replayed to
// another partner's webhook URL as a jose webhook. A webhook receiver
// checks typ is JWSTypeWebhook; reference §9.6 names alg and kid only and
// does not forbid more.
const (
	JWSTypeAnswer  = "api-response+jose"
	JWSTypeWebhook = "payment-status+jwt"
)

// SignAnswer returns the compact JWS of an API answer under the bank's
// key, header {"alg":"gost34.10-2012","kid":Kid,"typ":JWSTypeAnswer}.
func (k *BankKey) SignAnswer(payload []byte) (string, error) {
	return gost.SignJWSTyped(payload, k.Kid, JWSTypeAnswer, k.Key)
}

// SignWebhook returns the compact JWS of a webhook body under the bank's
// key, header {"alg":"gost34.10-2012","kid":Kid,"typ":JWSTypeWebhook}.
func (k *BankKey) SignWebhook(payload []byte) (string, error) {
	return gost.SignJWSTyped(payload, k.Kid, JWSTypeWebhook, k.Key)
}

// String and LogValue name the key by its kid only, so that a BankKey
// passed to a logger or a format verb never prints the private scalar.
func (k *BankKey) String() string { return "bank JWS key " + k.Kid }

// GoString is String, for %#v.
func (k *BankKey) GoString() string { return k.String() }

// LogValue implements slog.LogValuer.
func (k *BankKey) LogValue() slog.Value { return slog.StringValue(k.String()) }
