package gost

import (
	"encoding/asn1"
	"errors"
	"math/big"
	"testing"
	"unicode/utf16"
)

// testATV is one attribute of a test Name, its value encoded as tag says.
type testATV struct {
	oid   asn1.ObjectIdentifier
	tag   byte
	value string
}

var (
	oidCN  = asn1.ObjectIdentifier{2, 5, 4, 3}
	oidC   = asn1.ObjectIdentifier{2, 5, 4, 6}
	oidL   = asn1.ObjectIdentifier{2, 5, 4, 7}
	oidO   = asn1.ObjectIdentifier{2, 5, 4, 10}
	oidOU  = asn1.ObjectIdentifier{2, 5, 4, 11}
	oidINN = asn1.ObjectIdentifier{1, 2, 643, 3, 131, 1, 1}
)

// encodeString encodes s as the given string type, the way another client
// may write the same value.
func encodeString(tag byte, s string) []byte {
	var b []byte
	switch tag {
	case tagBMPString:
		for _, u := range utf16.Encode([]rune(s)) {
			b = append(b, byte(u>>8), byte(u))
		}
	case tagUniversalString:
		for _, r := range s {
			b = append(b, byte(r>>24), byte(r>>16), byte(r>>8), byte(r))
		}
	default:
		b = []byte(s)
	}
	return derWrap(tag, b)
}

// encodeName encodes a Name, each argument one RDN with its attributes in
// the order given.
func encodeName(rdns ...[]testATV) []byte {
	var parts [][]byte
	for _, rdn := range rdns {
		var atvs [][]byte
		for _, a := range rdn {
			atvs = append(atvs, derWrap(tagSequence, mustMarshal(a.oid), encodeString(a.tag, a.value)))
		}
		parts = append(parts, derWrap(tagSet, atvs...))
	}
	return derWrap(tagSequence, parts...)
}

// TestSameName compares a CA's issuer Name with the same Name as clients
// re-encode it (RFC 5280 §7.1: other string types, case, insignificant
// spaces; attributes of one RDN in any order) and with other Names.
func TestSameName(t *testing.T) {
	c := []testATV{{oidC, tagPrintableString, "RU"}}
	inn := []testATV{{oidINN, tagNumericString, "7707083893"}}
	o := []testATV{{oidO, tagUTF8String, `АО "Банк"`}}
	multi := []testATV{{oidOU, tagUTF8String, "Удостоверяющий центр"}, {oidL, tagUTF8String, "Москва"}}
	cn := []testATV{{oidCN, tagUTF8String, "Test CA 2026"}}
	ca := encodeName(c, inn, o, multi, cn)
	with := func(tag byte, value string) []testATV { return []testATV{{oidCN, tag, value}} }
	tests := []struct {
		name string
		der  []byte
		want bool
	}{
		{"the same bytes", ca, true},
		{"CN as PrintableString", encodeName(c, inn, o, multi, with(tagPrintableString, "Test CA 2026")), true},
		{"CN as BMPString", encodeName(c, inn, o, multi, with(tagBMPString, "Test CA 2026")), true},
		{"CN as UniversalString", encodeName(c, inn, o, multi, with(tagUniversalString, "Test CA 2026")), true},
		{"CN in other case", encodeName(c, inn, o, multi, with(tagUTF8String, "TEST ca 2026")), true},
		{"CN with leading, trailing and doubled spaces", encodeName(c, inn, o, multi, with(tagUTF8String, "  Test   CA\t2026 ")), true},
		{"Cyrillic O upper case as BMPString", encodeName(c, inn, []testATV{{oidO, tagBMPString, `ао "БАНК"`}}, multi, cn), true},
		{"INN as UTF8String", encodeName(c, []testATV{{oidINN, tagUTF8String, "7707083893"}}, o, multi, cn), true},
		{"C in lower case", encodeName([]testATV{{oidC, tagPrintableString, "ru"}}, inn, o, multi, cn), true},
		{"multi-valued RDN in other order", encodeName(c, inn, o, []testATV{multi[1], multi[0]}, cn), true},
		{"a soft hyphen in CN", encodeName(c, inn, o, multi, with(tagUTF8String, "Test C\u00adA 2026")), true},
		{"a compatibility capital (U+2102) in CN", encodeName(c, inn, o, multi, with(tagUTF8String, "Test \u2102A 2026")), true},
		{"another CN", encodeName(c, inn, o, multi, with(tagUTF8String, "Test CA 2027")), false},
		{"spaces inside a word", encodeName(c, inn, o, multi, with(tagUTF8String, "Test C A 2026")), false},
		{"CN value under OU", encodeName(c, inn, o, multi, []testATV{{oidOU, tagUTF8String, "Test CA 2026"}}), false},
		{"RDNs in reverse order", encodeName(cn, multi, o, inn, c), false},
		{"O and INN swapped", encodeName(c, o, inn, multi, cn), false},
		{"an RDN left out", encodeName(c, inn, o, cn), false},
		{"multi-valued RDN split in two", encodeName(c, inn, o, multi[:1], multi[1:], cn), false},
		{"CN as OCTET STRING", encodeName(c, inn, o, multi, with(tagOctetString, "Test CA 2026")), false},
		{"private use character", encodeName(c, inn, o, multi, with(tagUTF8String, "Test CA 2026\ue000")), false},
		{"not a Name", []byte{tagSequence, 3, tagSet, 1, 0}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := sameName(tc.der, ca); got != tc.want {
				t.Fatalf("sameName = %v, want %v", got, tc.want)
			}
			if got := sameName(ca, tc.der); got != tc.want {
				t.Fatalf("sameName reversed = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestSameSerial compares INTEGER contents with a serial as integers: a
// client padding the serial with zero octets names the same certificate.
func TestSameSerial(t *testing.T) {
	big16, _ := new(big.Int).SetString("10a1b2c3d4e5f60718293a4b5c6d7e8f", 16)
	tests := []struct {
		name    string
		content []byte
		serial  *big.Int
		want    bool
	}{
		{"minimal", []byte{0x7f}, big.NewInt(127), true},
		{"minimal with sign octet", []byte{0x00, 0x85}, big.NewInt(133), true},
		{"padded with zeros", []byte{0x00, 0x00, 0x7f}, big.NewInt(127), true},
		{"16 octets padded", append([]byte{0}, big16.Bytes()...), big16, true},
		{"negative", []byte{0x85}, big.NewInt(-123), true},
		{"negative padded with ones", []byte{0xff, 0x85}, big.NewInt(-123), true},
		{"0x85 is not 133", []byte{0x85}, big.NewInt(133), false},
		{"another serial", []byte{0x7e}, big.NewInt(127), false},
		{"empty", nil, big.NewInt(0), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := sameSerial(tc.content, tc.serial); got != tc.want {
				t.Fatalf("sameSerial = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestVerifyDetachedReencodedIssuer signs with issuerAndSerialNumber whose
// issuer is the certificate's Name (CN=signer, a PrintableString) encoded
// as clients re-encode it, and without the certificate: the given
// certificate verifies it; a different Name is still refused.
func TestVerifyDetachedReencodedIssuer(t *testing.T) {
	key, cert := testKeyAndCert(t, TC26256A)
	content := []byte("amount=100.00")
	cn := func(tag byte, v string) []byte { return encodeName([]testATV{{oidCN, tag, v}}) }
	tests := []struct {
		name   string
		issuer []byte
		want   error
	}{
		{"UTF8String", cn(tagUTF8String, "signer"), nil},
		{"BMPString in upper case", cn(tagBMPString, "SIGNER"), nil},
		{"PrintableString with spaces", cn(tagPrintableString, " signer  "), nil},
		{"another CN", cn(tagUTF8String, "signer2"), ErrSignerNotFound},
		{"O instead of CN", encodeName([]testATV{{oidO, tagUTF8String, "signer"}}), ErrSignerNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			der, err := SignDetachedWithOptions(content, cert, key, SignOptions{NoCertificate: true, SignerIssuer: tc.issuer})
			if err != nil {
				t.Fatal(err)
			}
			if err := VerifyDetached(der, content, cert); !errors.Is(err, tc.want) {
				t.Fatalf("VerifyDetached = %v, want %v", err, tc.want)
			}
		})
	}
}

// FuzzSameName feeds arbitrary bytes to the Name comparison: no panic, and
// it is symmetric, and a Name that parses is the same as itself and as its
// attributes re-encoded as UTF8String where they are strings.
func FuzzSameName(f *testing.F) {
	f.Add(encodeName([]testATV{{oidCN, tagPrintableString, "Test CA"}}), encodeName([]testATV{{oidCN, tagBMPString, "test ca"}}))
	f.Add(encodeName([]testATV{{oidOU, tagUTF8String, "a"}, {oidL, tagUTF8String, "b"}}), []byte{tagSequence, 0})
	f.Fuzz(func(t *testing.T, a, b []byte) {
		if sameName(a, b) != sameName(b, a) {
			t.Fatalf("not symmetric: %x %x", a, b)
		}
		rdns, err := parseName(a)
		if err != nil {
			return
		}
		var re [][]byte
		for _, rdn := range rdns {
			var atvs [][]byte
			for _, attr := range rdn {
				v := attr.value
				if attr.isString {
					v = derWrap(tagUTF8String, []byte(attr.prepared))
				}
				atvs = append(atvs, derWrap(tagSequence, mustMarshal(attr.oid), v))
			}
			re = append(re, derWrap(tagSet, atvs...))
		}
		if !sameName(a, derWrap(tagSequence, re...)) {
			t.Fatalf("%x is not the same as its re-encoding", a)
		}
	})
}
