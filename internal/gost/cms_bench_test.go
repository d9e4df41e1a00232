package gost

import (
	"bytes"
	"testing"
	"time"
)

// BenchmarkVerifyDetached times the check a signed create makes: a detached
// CMS signature (signed attributes, the signer's certificate embedded) over
// a 1 KB digest text, verified against the certificate the server stores.
func BenchmarkVerifyDetached(b *testing.B) {
	key, cert := testKeyAndCert(b, TC26256A)
	content := bytes.Repeat([]byte("payerAccount=40702810900000000001\n"), 30)
	der, err := SignDetachedWithOptions(content, cert, key, SignOptions{SigningTime: time.Now()})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := VerifyDetached(der, content, cert); err != nil {
			b.Fatal(err)
		}
	}
}
