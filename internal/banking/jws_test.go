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

type jwsCertMap map[string]Certificate

func (m jwsCertMap) GetCertificate(_ context.Context, uuid string) (Certificate, error) {
	c, ok := m[uuid]
	if !ok {
		return c, ErrNotFound
	}
	return c, nil
}

func jwsCards(t *testing.T, contour string, certs JWSCertificates) *Cards {
	t.Helper()
	c, err := NewCards(nil, CardsConfig{Contour: contour}, nil, certs)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestOpenJWSIdentityCertificates(t *testing.T) {
	ctx := context.Background()
	key, _ := gost.GenerateKey(gost.TC26256A, rand.Reader)
	cert, err := gost.SelfSignedCertificate(key, "jws", time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	const good, inactive, foreign = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222", "33333333-3333-4333-8333-333333333333"
	store := jwsCertMap{
		good:     {UUID: good, UserID: "u1", OrgID: "o1", DER: cert.Raw, Active: true},
		inactive: {UUID: inactive, UserID: "u1", OrgID: "o1", DER: cert.Raw},
		foreign:  {UUID: foreign, UserID: "u2", OrgID: "o2", DER: cert.Raw, Active: true},
	}
	p := Principal{OrgID: "o1", UserID: "u1"}
	payload := []byte(`{"a":1}`)
	sign := func(kid string) []byte { s, _ := gost.SignJWS(payload, kid, key); return []byte(s) }
	for _, contour := range []string{ContourSandbox, ContourProduction} {
		c := jwsCards(t, contour, IdentityJWSCertificates{Store: store})
		if got, err := c.OpenJWS(ctx, p, sign(good)); err != nil || string(got) != string(payload) {
			t.Fatalf("%s good: %s %v", contour, got, err)
		}
		for _, kid := range []string{inactive, foreign, "44444444-4444-4444-8444-444444444444"} {
			if _, err := c.OpenJWS(ctx, p, sign(kid)); KindOf(err) != KindSignCheck {
				t.Errorf("%s kid %s: %v", contour, kid, err)
			}
		}
		// Sandbox test certificates pass only in the sandbox, their uuid
		// in either case.
		for _, kid := range []string{SandboxCertSole, strings.ToUpper(SandboxCertSole)} {
			_, err := c.OpenJWS(ctx, p, sign(kid))
			if want := contour == ContourSandbox; (err == nil) != want {
				t.Errorf("%s sandbox kid %s: %v", contour, kid, err)
			}
		}
	}
}

// TestOpenJWSMadeByOpenSSL checks a JWS whose signature OpenSSL's GOST
// engine made over the signing input, assembled by hand as a partner would.
func TestOpenJWSMadeByOpenSSL(t *testing.T) {
	o := newOpenSSLOracle(t)
	run := o.run
	run("genpkey", "-engine", "gost", "-algorithm", "gost2012_256", "-pkeyopt", "paramset:A", "-out", "k.pem")
	run("req", "-engine", "gost", "-x509", "-new", "-key", "k.pem", "-subj", "/CN=jws", "-days", "30", "-out", "c.pem")
	const kid = "9d2f6c1e-5b7a-4e3c-8d1f-0a2b3c4d5e6f"
	b64 := base64.RawURLEncoding.EncodeToString
	input := b64([]byte(`{"alg":"gost34.10-2012","kid":"`+kid+`"}`)) + "." +
		b64([]byte(`{"code":"NON_RENEW","businessCardId":"c1","externalId":"4f9c2a1e-8b3d-4c5e-9f6a-7b8c9d0e1f2a","limit":10}`))
	o.write("in.txt", []byte(input))
	run("dgst", "-engine", "gost", "-md_gost12_256", "-sign", "k.pem", "-out", "sig.bin", "in.txt")
	sig, pemCert := o.read("sig.bin"), o.read("c.pem")
	cert, err := gost.ParseCertificate(pemCert)
	if err != nil {
		t.Fatal(err)
	}
	certs := fixedCert{kid: kid, cert: cert}
	compact := []byte(input + "." + b64(sig))
	c := jwsCards(t, ContourProduction, certs)
	payload, err := c.OpenJWS(context.Background(), Principal{}, compact)
	if err != nil {
		t.Fatalf("OpenSSL JWS rejected: %v", err)
	}
	if _, err := ParseLimitChange(payload); err != nil {
		t.Fatal(err)
	}
	sig[5] ^= 1
	if _, err := c.OpenJWS(context.Background(), Principal{}, []byte(input+"."+b64(sig))); KindOf(err) != KindSignCheck {
		t.Fatalf("tampered: %v", err)
	}
}

type fixedCert struct {
	kid  string
	cert *gost.Certificate
}

func (f fixedCert) JWSCertificate(_ context.Context, _ Principal, kid string) (*gost.Certificate, error) {
	if kid != f.kid {
		return nil, errors.New("unknown")
	}
	return f.cert, nil
}
