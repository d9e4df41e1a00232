package gost

import (
	"bytes"
	"encoding/pem"
)

// pemBoundary opens every PEM block (RFC 7468 §2).
var pemBoundary = []byte("-----BEGIN ")

// pemInput is the one rule by which the parsers of this package (CMS,
// certificates, private keys, certificate requests) tell PEM from DER
// and base64: the input is PEM when, after optional white space, it
// starts with the PEM boundary, and only then. It is then valid when it
// is one PEM block with nothing but white space after it; block is nil
// (and isPEM true) when it is not, which the caller refuses.
//
// pem.Decode alone looks for a boundary anywhere at the start of a line,
// and skips one that opens no valid block for the next: a DER structure
// that holds the bytes of a PEM block (a certificate's name, a CMS
// attribute) was read as that block instead of itself, and text with a
// PEM block after junk or after another boundary was taken as that
// block.
func pemInput(in []byte) (block *pem.Block, isPEM bool) {
	trimmed := bytes.TrimLeft(in, " \t\r\n")
	if !bytes.HasPrefix(trimmed, pemBoundary) {
		return nil, false
	}
	block, rest := pem.Decode(trimmed)
	// The bytes pem.Decode consumed must hold one boundary, the one at
	// the start, and nothing but white space may follow the block.
	if block == nil || len(bytes.TrimSpace(rest)) != 0 || bytes.Count(trimmed[:len(trimmed)-len(rest)], pemBoundary) != 1 {
		return nil, true
	}
	return block, true
}
