package gost

import (
	"encoding/asn1"
	"errors"
	"fmt"
)

// A small DER reader. encoding/asn1 is used to build structures, but for
// parsing CMS it is too lenient in one place that matters here (an optional
// asn1.RawValue field matches any tag), so CMS and key containers are read
// element by element. Indefinite lengths (BER) are accepted for constructed
// elements because some signing tools emit them around SignedData; anything
// whose bytes are hashed (signed attributes, TBS certificates) must be DER
// anyway.

// Tag bytes used below (class and constructed bits included).
const (
	tagInteger     = 0x02
	tagBitString   = 0x03
	tagOctetString = 0x04
	tagNull        = 0x05
	tagOID         = 0x06
	tagUTCTime     = 0x17
	tagGenTime     = 0x18
	tagSequence    = 0x30
	tagSet         = 0x31
	tagContext0    = 0xa0 // [0] constructed
	tagContext1    = 0xa1 // [1] constructed
	tagContext0Prm = 0x80 // [0] primitive
)

// ErrMalformed reports DER or CMS input that cannot be decoded.
var ErrMalformed = errors.New("gost: malformed ASN.1")

const maxDERDepth = 32

type derElement struct {
	tag     byte
	content []byte // content octets (for indefinite length: without end-of-contents)
	full    []byte // the whole TLV
}

type derReader struct{ b []byte }

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

func (d *derReader) empty() bool { return len(d.b) == 0 }

func (d *derReader) peek() (byte, bool) {
	if len(d.b) == 0 {
		return 0, false
	}
	return d.b[0], true
}

// next reads one element of any tag.
func (d *derReader) next() (derElement, error) {
	el, n, err := parseTLV(d.b, 0)
	if err != nil {
		return derElement{}, err
	}
	d.b = d.b[n:]
	return el, nil
}

// read reads one element and requires the given tag.
func (d *derReader) read(tag byte) (derElement, error) {
	t, ok := d.peek()
	if !ok {
		return derElement{}, malformed("expected tag 0x%02x, got end of data", tag)
	}
	if t != tag {
		return derElement{}, malformed("expected tag 0x%02x, got 0x%02x", tag, t)
	}
	return d.next()
}

// optional reads an element only if the next tag matches.
func (d *derReader) optional(tag byte) (derElement, bool, error) {
	if t, ok := d.peek(); !ok || t != tag {
		return derElement{}, false, nil
	}
	el, err := d.next()
	return el, err == nil, err
}

// parseTLV decodes the element at the start of b and returns it with the
// number of bytes it occupies.
func parseTLV(b []byte, depth int) (derElement, int, error) {
	if depth > maxDERDepth {
		return derElement{}, 0, malformed("nesting too deep")
	}
	if len(b) < 2 {
		return derElement{}, 0, malformed("truncated element")
	}
	tag := b[0]
	if tag&0x1f == 0x1f {
		return derElement{}, 0, malformed("multi-byte tags are not supported")
	}
	l := int(b[1])
	off := 2
	switch {
	case l < 0x80:
	case l == 0x80:
		if tag&0x20 == 0 {
			return derElement{}, 0, malformed("indefinite length on a primitive element")
		}
		// Walk the children up to the end-of-contents marker.
		pos := off
		for {
			if len(b)-pos < 2 {
				return derElement{}, 0, malformed("unterminated indefinite length")
			}
			if b[pos] == 0 && b[pos+1] == 0 {
				return derElement{tag: tag, content: b[off:pos], full: b[:pos+2]}, pos + 2, nil
			}
			_, n, err := parseTLV(b[pos:], depth+1)
			if err != nil {
				return derElement{}, 0, err
			}
			pos += n
		}
	default:
		nb := l & 0x7f
		if nb > 4 || len(b) < 2+nb {
			return derElement{}, 0, malformed("bad length")
		}
		l = 0
		for i := 0; i < nb; i++ {
			l = l<<8 | int(b[2+i])
		}
		off += nb
		if l < 0 {
			return derElement{}, 0, malformed("bad length")
		}
	}
	if len(b)-off < l {
		return derElement{}, 0, malformed("element of %d bytes truncated to %d", l, len(b)-off)
	}
	return derElement{tag: tag, content: b[off : off+l], full: b[:off+l]}, off + l, nil
}

// children returns a reader over a constructed element's content.
func (e derElement) children() *derReader { return &derReader{b: e.content} }

func (e derElement) oid() (asn1.ObjectIdentifier, error) {
	var oid asn1.ObjectIdentifier
	if e.tag != tagOID {
		return nil, malformed("expected OBJECT IDENTIFIER")
	}
	if rest, err := asn1.Unmarshal(e.full, &oid); err != nil || len(rest) != 0 {
		return nil, malformed("bad OBJECT IDENTIFIER")
	}
	return oid, nil
}

// readAlgorithm reads an AlgorithmIdentifier and returns its OID and the raw
// parameters element (nil when absent).
func (d *derReader) readAlgorithm() (asn1.ObjectIdentifier, []byte, error) {
	seq, err := d.read(tagSequence)
	if err != nil {
		return nil, nil, err
	}
	r := seq.children()
	el, err := r.read(tagOID)
	if err != nil {
		return nil, nil, err
	}
	oid, err := el.oid()
	if err != nil {
		return nil, nil, err
	}
	var params []byte
	if !r.empty() {
		p, err := r.next()
		if err != nil {
			return nil, nil, err
		}
		params = p.full
	}
	// AlgorithmIdentifier is the OID and at most one parameters element
	// (RFC 5280 §4.1.1.2); anything after them is not DER of it.
	if !r.empty() {
		return nil, nil, malformed("AlgorithmIdentifier has fields after its parameters")
	}
	return oid, params, nil
}

// derWrap encodes one TLV with a definite length.
func derWrap(tag byte, content ...[]byte) []byte {
	n := 0
	for _, c := range content {
		n += len(c)
	}
	var hdr []byte
	switch {
	case n < 0x80:
		hdr = []byte{tag, byte(n)}
	case n < 0x100:
		hdr = []byte{tag, 0x81, byte(n)}
	case n < 0x10000:
		hdr = []byte{tag, 0x82, byte(n >> 8), byte(n)}
	default:
		hdr = []byte{tag, 0x83, byte(n >> 16), byte(n >> 8), byte(n)}
	}
	out := make([]byte, 0, len(hdr)+n)
	out = append(out, hdr...)
	for _, c := range content {
		out = append(out, c...)
	}
	return out
}

func mustMarshal(v any) []byte {
	b, err := asn1.Marshal(v)
	if err != nil {
		panic("gost: marshalling a fixed structure: " + err.Error())
	}
	return b
}
