package banking

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"partnerapi/internal/gost"
)

// TestOpenJWSRefusalNamesTheReason: a JWS refused for its encoding or its
// signature says what is wrong (before, "not a JWS compact serialization"
// and "did not verify" alone). The usual slips of a hand-made JWS: parts
// encoded with the "=" padding kept (Java's Base64.getUrlEncoder()) or with
// Base64's + and /, a 256-bit key's signature under a 512-bit certificate's
// kid, and a signature that is no s‖r of the certificate's key.
func TestOpenJWSRefusalNamesTheReason(t *testing.T) {
	const kid256, kid512 = "5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d", "6b7c8d9e-0f1a-4b2c-9d3e-4f5a6b7c8d9e"
	certFor := func(params *gost.Params) (*gost.PrivateKey, *gost.Certificate) {
		t.Helper()
		key, err := gost.GenerateKey(params, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		cert, err := gost.SelfSignedCertificate(key, "jws", time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		return key, cert
	}
	key256, cert256 := certFor(gost.TC26256A)
	_, cert512 := certFor(gost.TC26512A)
	store := jwsCertMap{
		kid256: {UUID: kid256, UserID: "u1", OrgID: "o1", DER: cert256.Raw, Active: true},
		kid512: {UUID: kid512, UserID: "u1", OrgID: "o1", DER: cert512.Raw, Active: true},
	}
	c := jwsCards(t, ContourProduction, IdentityJWSCertificates{Store: store})
	p := Principal{OrgID: "o1", UserID: "u1"}
	payload := []byte(`{"code":"NON_RENEW","businessCardId":"c1","limit":10}`)
	sign := func(kid string) string {
		t.Helper()
		s, err := gost.SignJWS(payload, kid, key256)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	// reencode writes each part with Base64url's padding, or with the
	// standard alphabet: the bytes are the same, the encoding is not RFC 7515's.
	reencode := func(compact string, enc *base64.Encoding) string {
		parts := strings.Split(compact, ".")
		for i, part := range parts {
			b, err := base64.RawURLEncoding.DecodeString(part)
			if err != nil {
				t.Fatal(err)
			}
			parts[i] = enc.EncodeToString(b)
		}
		return strings.Join(parts, ".")
	}
	good := sign(kid256)
	// The same JWS with one bit of its signature value changed.
	dot := strings.LastIndexByte(good, '.')
	sig, err := base64.RawURLEncoding.DecodeString(good[dot+1:])
	if err != nil {
		t.Fatal(err)
	}
	sig[5] ^= 1
	flipped := good[:dot+1] + base64.RawURLEncoding.EncodeToString(sig)
	tests := []struct {
		name    string
		compact string
		kind    Kind
		suffix  string
	}{
		{"padding kept", reencode(good, base64.URLEncoding), KindDeserialization, `без дополнения "=" (RFC 7515 §2)`},
		{"standard Base64 alphabet", reencode(good, base64.StdEncoding), KindDeserialization, `без дополнения "=" (RFC 7515 §2)`},
		{"256-bit signature under a 512-bit certificate", sign(kid512), KindSignCheck, "подпись 64 байт, а ключу сертификата (512 бит) нужна подпись s‖r из 128 байт"},
		{"signature does not verify", flipped, KindSignCheck, "подпись не соответствует ключу сертификата и подписанным заголовку и данным"},
	}
	if _, err := c.OpenJWS(context.Background(), p, []byte(good)); err != nil {
		t.Fatalf("the unaltered JWS is refused: %v", err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.OpenJWS(context.Background(), p, []byte(tc.compact))
			var e *Error
			if KindOf(err) != tc.kind || !errors.As(err, &e) {
				t.Fatalf("%v, want kind %d", err, tc.kind)
			}
			if !strings.HasSuffix(e.Message, tc.suffix) {
				t.Fatalf("message %q, want it to end in %q", e.Message, tc.suffix)
			}
		})
	}
}
