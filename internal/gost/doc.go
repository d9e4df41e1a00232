// Package gost implements the Russian GOST cryptography the banking API
// relies on, written from the RFCs because no Go GOST library is available:
//
//   - Streebog-256/512 (GOST R 34.11-2012, RFC 6986) as hash.Hash;
//   - GOST R 34.10-2012 signatures (RFC 7091) over the RFC 7836 / RFC 4357
//     curves: tc26 256-bit A–D, CryptoPro A/B/C/XchA/XchB, tc26 512-bit A–C;
//   - GOST X.509 certificates (RFC 9215): parsing on top of crypto/x509 and
//     self-signed issuance; PKCS#8 keys as the OpenSSL engine writes them;
//   - CMS (RFC 5652) detached SignedData, verification and creation;
//   - JWS compact serialisation with alg "gost34.10-2012".
//
// Byte order follows the OpenSSL GOST engine (banking.md 9.3): hash output
// bytes as gost12sum prints them; the digest is read little-endian to form
// e; signatures are s‖r, each big-endian; public keys are X‖Y and private
// keys d, each little-endian.
//
// The package does no I/O. Field arithmetic is fixed-width Montgomery code
// with masked selects, in amd64 assembly where the CPU has BMI2 and ADX
// (the purego build tag forces the Go code). Signing multiplies the base
// point with a precomputed table read by masked scans, but the point
// formulas still branch in rare cases and math/big handles the scalars, so
// signing is not constant time; keep signing keys for tests, the sandbox
// and low-value use. Verification runs in variable time on public data.
//
// Errors are classified by sentinels for errors.Is: ErrBadSignature (and,
// within it, ErrContentMismatch for a CMS that signs other content),
// ErrMalformed, ErrNotGOST, ErrInvalidKey, ErrSignerNotFound and the JWS
// ones (ErrJWSMalformed, ErrJWSMissingKid, ErrJWSInvalidKid, ErrJWSWrongAlg).
package gost
