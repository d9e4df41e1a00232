package gost

import (
	"bytes"
	"encoding/asn1"
	"math/big"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// A SignerInfo's issuerAndSerialNumber is written by the signing client,
// which may encode the issuer Name differently from the certificate it
// names (CryptoPro and older OpenSSL builds re-encode it from their own
// store: PrintableString where the CA wrote UTF8String, BMPString, other
// case or spacing), and may pad the serial with a leading zero. RFC 5280
// §7.1 says two Names are the same when they have the same RDNs in the same
// order, each RDN the same attributes in any order, with the same types and
// values that match after the LDAP string preparation of RFC 4518; so
// issuers are compared that way here, and serials as integers.

// sameSerial reports whether the content octets of a DER INTEGER (two's
// complement, big-endian) have the value serial. Equal minimal encodings
// are taken without arithmetic.
func sameSerial(content []byte, serial *big.Int) bool {
	if len(content) == 0 || serial == nil {
		return false
	}
	if der, err := asn1.Marshal(serial); err == nil && bytes.Equal(derWrap(tagInteger, content), der) {
		return true
	}
	v := new(big.Int).SetBytes(content)
	if content[0]&0x80 != 0 {
		v.Sub(v, new(big.Int).Lsh(big.NewInt(1), uint(len(content))*8))
	}
	return v.Cmp(serial) == 0
}

// sameName reports whether two encoded Names are the same Name under RFC
// 5280 §7.1. Byte-equal Names are taken without parsing; a Name that does
// not parse is the same as no other.
func sameName(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	ra, err := parseName(a)
	if err != nil {
		return false
	}
	rb, err := parseName(b)
	if err != nil || len(ra) != len(rb) {
		return false
	}
	for i := range ra {
		if !sameRDN(ra[i], rb[i]) {
			return false
		}
	}
	return true
}

// nameAttr is one AttributeTypeAndValue of a Name. prepared is the value
// after string preparation when it is a string that has one; other values
// (and strings with prohibited characters) compare by their encoding.
type nameAttr struct {
	oid      asn1.ObjectIdentifier
	value    []byte // the value's whole TLV
	prepared string
	isString bool
}

func (a nameAttr) same(b nameAttr) bool {
	if !a.oid.Equal(b.oid) {
		return false
	}
	if a.isString && b.isString {
		return a.prepared == b.prepared
	}
	return bytes.Equal(a.value, b.value)
}

// sameRDN compares two RDNs as sets. Attribute equality is an equivalence
// relation, so pairing each attribute of a with the first unused equal one
// of b finds a matching whenever there is one.
func sameRDN(a, b []nameAttr) bool {
	if len(a) != len(b) {
		return false
	}
	used := make([]bool, len(b))
next:
	for _, x := range a {
		for j, y := range b {
			if !used[j] && x.same(y) {
				used[j] = true
				continue next
			}
		}
		return false
	}
	return true
}

// parseName reads Name ::= SEQUENCE OF SET OF SEQUENCE { type OID, value ANY }.
func parseName(der []byte) ([][]nameAttr, error) {
	el, n, err := parseTLV(der, 0)
	if err != nil {
		return nil, err
	}
	if el.tag != tagSequence || n != len(der) {
		return nil, malformed("Name is not one SEQUENCE")
	}
	var rdns [][]nameAttr
	r := el.children()
	for !r.empty() {
		set, err := r.read(tagSet)
		if err != nil {
			return nil, err
		}
		var rdn []nameAttr
		sr := set.children()
		for !sr.empty() {
			atv, err := sr.read(tagSequence)
			if err != nil {
				return nil, err
			}
			ar := atv.children()
			t, err := ar.read(tagOID)
			if err != nil {
				return nil, err
			}
			oid, err := t.oid()
			if err != nil {
				return nil, err
			}
			v, err := ar.next()
			if err != nil {
				return nil, err
			}
			if !ar.empty() {
				return nil, malformed("AttributeTypeAndValue has more than a type and a value")
			}
			attr := nameAttr{oid: oid, value: v.full}
			if s, ok := decodeDirectoryString(v); ok {
				attr.prepared, attr.isString = prepareString(s)
			}
			rdn = append(rdn, attr)
		}
		if len(rdn) == 0 {
			return nil, malformed("empty RelativeDistinguishedName")
		}
		rdns = append(rdns, rdn)
	}
	return rdns, nil
}

// String types a Name's attribute values come in (universal tags).
const (
	tagUTF8String      = 0x0c
	tagNumericString   = 0x12
	tagPrintableString = 0x13
	tagTeletexString   = 0x14
	tagIA5String       = 0x16
	tagUniversalString = 0x1c
	tagBMPString       = 0x1e
)

// decodeDirectoryString transcodes a string value to Go's UTF-8 (RFC 4518
// step 1). TeletexString is read as Latin-1, as crypto/x509 reads it.
func decodeDirectoryString(v derElement) (string, bool) {
	c := v.content
	switch v.tag {
	case tagUTF8String:
		return string(c), utf8.Valid(c)
	case tagNumericString, tagPrintableString, tagIA5String:
		for _, b := range c {
			if b >= utf8.RuneSelf {
				return "", false
			}
		}
		return string(c), true
	case tagTeletexString:
		rs := make([]rune, len(c))
		for i, b := range c {
			rs[i] = rune(b)
		}
		return string(rs), true
	case tagBMPString:
		if len(c)%2 != 0 {
			return "", false
		}
		u := make([]uint16, len(c)/2)
		for i := range u {
			u[i] = uint16(c[2*i])<<8 | uint16(c[2*i+1])
		}
		return string(utf16.Decode(u)), true
	case tagUniversalString:
		if len(c)%4 != 0 {
			return "", false
		}
		rs := make([]rune, len(c)/4)
		for i := range rs {
			rs[i] = rune(uint32(c[4*i])<<24 | uint32(c[4*i+1])<<16 | uint32(c[4*i+2])<<8 | uint32(c[4*i+3]))
			if !utf8.ValidRune(rs[i]) {
				return "", false
			}
		}
		return string(rs), true
	}
	return "", false
}

// prepareString is RFC 4518's preparation for caseIgnoreMatch: map (drop
// format and control characters, map separators to SPACE, fold case),
// normalise to NFKC (folding once more), refuse prohibited characters (unassigned, private
// use, non-characters: the string then compares by its encoding), and
// make insignificant spaces so (no leading or trailing ones, internal runs
// taken as one).
func prepareString(s string) (string, bool) {
	mapped := strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\v' || r == '\f' || r == '\r' || r == 0x85:
			return ' '
		case r == 0x034f || r == 0x1806 || (r >= 0x180b && r <= 0x180d) || (r >= 0xfe00 && r <= 0xfe0f) || r == 0xfffc:
			return -1
		case unicode.In(r, unicode.Cc, unicode.Cf):
			return -1 // soft hyphen and zero width space among them
		case unicode.In(r, unicode.Zs, unicode.Zl, unicode.Zp):
			return ' '
		}
		return r
	}, s)
	// Folded again after NFKC, since NFKC makes capitals of some letters
	// that folding leaves alone (U+2130 SCRIPT CAPITAL E is E): RFC 3454's
	// table B.2 folds those too.
	fold := cases.Fold()
	prepared := norm.NFKC.String(fold.String(norm.NFKC.String(fold.String(mapped))))
	for _, r := range prepared {
		if unicode.Is(unicode.Co, r) || !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z) ||
			(r >= 0xfdd0 && r <= 0xfdef) || r&0xfffe == 0xfffe {
			return "", false
		}
	}
	return strings.Join(strings.Fields(prepared), " "), true
}
