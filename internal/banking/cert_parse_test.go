package banking

import (
	"crypto/rand"
	"testing"
	"time"

	"partnerapi/internal/gost"
)

// TestParsedCertificatesKeyedByBytes checks the parse cache: the same bytes
// give the same shared parse, other bytes their own, and bytes that do not
// parse fail every time instead of being remembered.
func TestParsedCertificatesKeyedByBytes(t *testing.T) {
	var c parsedCertificates
	der := func(cn string) []byte {
		key, err := gost.GenerateKey(gost.TC26256A, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		cert, err := gost.SelfSignedCertificate(key, cn, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		return cert.Raw
	}
	a, b := der("A"), der("B")
	pa, err := c.parse(a)
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.parse(append([]byte(nil), a...))
	if err != nil || again != pa {
		t.Fatalf("second parse of the same bytes: %p, %v; want the cached %p", again, err, pa)
	}
	pb, err := c.parse(b)
	if err != nil || pb == pa || pb.Subject == pa.Subject {
		t.Fatalf("other bytes: %v, %v; want their own parse", pb, err)
	}
	bad := append([]byte(nil), a[:len(a)/2]...)
	for range 2 {
		if _, err := c.parse(bad); err == nil {
			t.Fatal("truncated DER parsed")
		}
	}
	if len(c.m) != 2 {
		t.Fatalf("cache holds %d parses, want 2", len(c.m))
	}
}
