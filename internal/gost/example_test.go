package gost_test

import (
	"crypto/rand"
	"fmt"
	"time"

	"partnerapi/internal/gost"
)

// The banking flow: sign the digest text as a detached CMS (base64 of it is
// digestSignatures[].base64Encoded) and verify it with the certificate that
// certificateUuid names.
func ExampleSignDetached() {
	key, err := gost.GenerateKey(gost.TC26256A, rand.Reader)
	if err != nil {
		panic(err)
	}
	now := time.Now()
	cert, err := gost.SelfSignedCertificate(key, "Sandbox signer", now.Add(-time.Hour), now.AddDate(1, 0, 0))
	if err != nil {
		panic(err)
	}
	digest := []byte("amount=100.00\ndate=2026-01-15")
	cms, err := gost.SignDetached(digest, cert, key)
	if err != nil {
		panic(err)
	}
	fmt.Println(gost.VerifyDetached(cms, digest, cert))
	fmt.Println(gost.VerifyDetached(cms, []byte("amount=999.00\ndate=2026-01-15"), cert) != nil)
	// Output:
	// <nil>
	// true
}

func ExampleParseJWS() {
	key, _ := gost.GenerateKey(gost.TC26256A, rand.Reader)
	now := time.Now()
	cert, _ := gost.SelfSignedCertificate(key, "card limits", now, now.Add(time.Hour))
	token, _ := gost.SignJWS([]byte(`{"limit":"1000.00"}`), "f47ac10b-58cc-4372-a567-0e02b2c3d479", key)

	jws, err := gost.ParseJWS(token)
	if err != nil {
		panic(err)
	}
	fmt.Println(jws.Header.Kid, string(jws.Payload), jws.Verify(cert))
	// Output: f47ac10b-58cc-4372-a567-0e02b2c3d479 {"limit":"1000.00"} <nil>
}

func ExampleStreebog256() {
	sum := gost.Streebog256(nil)
	fmt.Printf("%x\n", sum)
	// Output: 3f539a213e97c802cc229d474c6aa32a825a360b2a933a949fd925208d9ce1bb
}
