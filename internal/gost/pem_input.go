package gost

import (
	"bytes"
	"encoding/base64"
	"encoding/pem"
	"unicode/utf8"
)

// pemBoundary opens every PEM block (RFC 7468 §2).
var pemBoundary = []byte("-----BEGIN ")

// linePEMBoundary is the PEM boundary opening a line after text.
var linePEMBoundary = []byte("\n-----BEGIN ")

// utf8BOM is the byte-order mark editors on Windows put at the start of a
// text file; it is no part of the text.
var utf8BOM = []byte("\xef\xbb\xbf")

// pemInput is the one rule by which the parsers of this package (CMS,
// certificates, private keys, certificate requests) tell PEM from DER
// and base64: the input is PEM when, after a byte-order mark and white
// space, it starts with the PEM boundary, or when it is text whose first
// line that starts with the boundary comes after explanatory text
// (explanatoryText), and only then. It is then valid when it is one PEM
// block with nothing but white space after it; block is nil (and isPEM
// true) when it is not, which the caller refuses.
//
// pem.Decode alone looks for a boundary anywhere at the start of a line,
// and skips one that opens no valid block for the next: a DER structure
// that holds the bytes of a PEM block (a certificate's name, a CMS
// attribute) was read as that block instead of itself, and text with a
// PEM block after another boundary was taken as that block.
func pemInput(in []byte) (block *pem.Block, isPEM bool) {
	trimmed, isPEM := pemStart(in)
	if !isPEM {
		return nil, false
	}
	block, rest := pemBlock(trimmed)
	// Nothing but white space may follow the block.
	if block == nil || len(bytes.TrimSpace(rest)) != 0 {
		return nil, true
	}
	return block, true
}

// pemStart is where in's first PEM block starts, when in is PEM by
// pemInput's rule: after a byte-order mark and white space, or after
// explanatory text.
func pemStart(in []byte) (start []byte, isPEM bool) {
	trimmed := bytes.TrimLeft(bytes.TrimPrefix(in, utf8BOM), " \t\r\n")
	if !bytes.HasPrefix(trimmed, pemBoundary) {
		at, ok := explanatoryText(trimmed)
		if !ok {
			return nil, false
		}
		trimmed = trimmed[at:]
	}
	return trimmed, true
}

// pemBlock decodes the block that in starts with. The bytes pem.Decode
// consumed must hold one boundary, the one at the start: pem.Decode skips
// a boundary that opens no valid block and takes the next one, which
// would be another block than the one in starts with. block is nil when
// in does not start with a valid block.
func pemBlock(in []byte) (block *pem.Block, rest []byte) {
	block, rest = pem.Decode(in)
	if block == nil || bytes.Count(in[:len(in)-len(rest)], pemBoundary) != 1 {
		return nil, in
	}
	return block, rest
}

// pemBlocks is pemInput for a file that may hold up to max blocks one
// after another, as a certificate file holding the certificate's chain
// does: each block may follow white space or explanatory text (what
// `openssl pkcs12 -nokeys` writes above every certificate), and nothing
// but white space may follow the last. blocks is nil (and isPEM true)
// when in opens as PEM but is not such a sequence, or holds more than max
// blocks.
func pemBlocks(in []byte, max int) (blocks []*pem.Block, isPEM bool) {
	next, isPEM := pemStart(in)
	if !isPEM {
		return nil, false
	}
	for {
		block, rest := pemBlock(next)
		if block == nil || len(blocks) == max {
			return nil, true
		}
		blocks = append(blocks, block)
		rest = bytes.TrimLeft(rest, " \t\r\n")
		if len(rest) == 0 {
			return blocks, true
		}
		if !bytes.HasPrefix(rest, pemBoundary) {
			at, ok := explanatoryText(rest)
			if !ok {
				return nil, true
			}
			rest = rest[at:]
		}
		next = rest
	}
}

// explanatoryText reports where a PEM block starts in in when text comes
// before it, as RFC 7468 §5.2 allows ("explanatory text") and as the tools
// partners and operators use write it: `openssl ca` and `openssl x509
// -text` print the certificate decoded above its PEM, `openssl req -text`
// the request, `openssl pkcs12 -nokeys` its "Bag Attributes". The block
// must open a line, and the text before it must be text: valid UTF-8
// without control characters other than white space, holding no other
// boundary. A DER structure (whose tags and lengths are control bytes)
// never passes for such text, so one that holds a PEM block's bytes is
// still read as itself.
func explanatoryText(in []byte) (at int, ok bool) {
	i := bytes.Index(in, linePEMBoundary)
	if i < 0 {
		return 0, false
	}
	text := in[:i+1]
	if !utf8.Valid(text) || bytes.Contains(text, pemBoundary) {
		return 0, false
	}
	for _, r := range string(text) {
		if (r < 0x20 && r != '\t' && r != '\r' && r != '\n') || (r >= 0x7f && r < 0xa0) {
			return 0, false
		}
	}
	return i + 1, true
}

// decodeCMSInput accepts DER, PEM ("CMS"/"PKCS7") or base64 DER, told
// apart by how the input opens, never by what it holds further on
// (pemInput): PEM when it opens with the PEM boundary after optional
// white space or explanatory text, and then only one valid block, else it
// is returned as it is and fails to parse as malformed; DER, returned untouched, when it
// opens with a SEQUENCE tag (its last bytes, a signature, may be any
// value); base64 (standard or URL alphabet, padded or not, white space
// around) otherwise.
func decodeCMSInput(in []byte) []byte {
	if block, isPEM := pemInput(in); isPEM {
		if block == nil {
			return in
		}
		return block.Bytes
	}
	if len(in) > 0 && in[0] != tagSequence {
		s := string(bytes.TrimSpace(in))
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			if b, err := enc.DecodeString(s); err == nil {
				return b
			}
		}
	}
	return in
}
