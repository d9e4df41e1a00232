package banking

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"partnerapi/internal/gost"
)

// SignTypeQualified is the signType of a qualified (УКЭП) signature.
const SignTypeQualified = "UKEP_UL"

// CertificateLookup is what the verifier needs from the identity store.
type CertificateLookup interface {
	GetCertificate(ctx context.Context, uuid string) (Certificate, error)
}

// signatureVerifier implements SignatureVerifier for one contour.
type signatureVerifier struct {
	contour string
	certs   CertificateLookup
	now     func() time.Time // whether a certificate is within its validity period
}

// NewSignatureVerifier returns the verification policy of contour
// (sandbox, test or production) over the stored certificates, checking
// their validity periods against the wall clock.
func NewSignatureVerifier(contour string, certs CertificateLookup) SignatureVerifier {
	return NewSignatureVerifierAt(contour, certs, time.Now)
}

// NewSignatureVerifierAt is NewSignatureVerifier with the clock the
// certificates' validity periods are checked against. It is the wall
// clock in every contour: the sandbox clock moves card limits only, and
// the sandbox certificates are everyone's, so one organisation's clock
// must not expire them for the others.
func NewSignatureVerifierAt(contour string, certs CertificateLookup, now func() time.Time) SignatureVerifier {
	return &signatureVerifier{contour: contour, certs: certs, now: now}
}

// Verify checks each signature and then the set rules. No signatures is an
// empty set (a draft), not an error.
func (v *signatureVerifier) Verify(ctx context.Context, p Principal, digest string, sigs []DigestSignature) (SignatureSet, error) {
	return v.verify(ctx, p, digest, sigs, false)
}

// VerifyDocument is Verify for payment documents, which take a token/
// certificate mismatch as a signature the bank later finds invalid.
//
// What counts as a mismatch follows reference §9.1: certificateUuid must be
// the uuid of a certificateInfos[] entry of the token user's /v1/crypto;
// "without certificateUuid it is rejected; a token/certificate mismatch
// creates a draft that later becomes INVALIDEDS" [S, P]. A mismatch is
// therefore a certificate the bank knows, active, whose owner is not the
// token's user, whether a colleague in the same organisation or a user of
// another one: the document is accepted and fails at the e-signature check.
// Everything the reference answers otherwise stays an immediate error:
// no certificateUuid (§9.1, VALIDATION_FAULT as before); a signature that is
// not Base64 (a malformed request, VALIDATION_FAULT); an unknown or inactive
// certificate and a signature that does not verify with the certificate it
// names (§13 SIGN_CHECK_EXCEPTION, "signature not authentic, certificate
// not found or inactive"), which also covers a foreign certificate whose
// CMS is not its owner's signature of this digest; in the sandbox any uuid
// but the four of §7 (WORKFLOW_FAULT, §7), since only those are known there
// and signature bytes are not checked. The sandbox has no mismatch: there
// "the certificate UUID decides the outcome" (§7), so the four published
// uuids give their §7 result whichever user's token carries them.
func (v *signatureVerifier) VerifyDocument(ctx context.Context, p Principal, digest string, sigs []DigestSignature) (SignatureSet, error) {
	return v.verify(ctx, p, digest, sigs, true)
}

// verify is Verify, or VerifyDocument with foreignOK.
func (v *signatureVerifier) verify(ctx context.Context, p Principal, digest string, sigs []DigestSignature, foreignOK bool) (SignatureSet, error) {
	if len(sigs) > 2 {
		return SignatureSet{}, Errorf(KindWorkflow, "Допускается не более двух подписей, передано %d", len(sigs))
	}
	// Every item's certificateUuid is checked for its form before any
	// certificate is looked up, so that a malformed second item is the
	// request's fault (VALIDATION_FAULT) whatever the first one's
	// certificate turns out to be.
	for i, s := range sigs {
		if err := certificateUUIDFormat(i, s.CertificateUUID); err != nil {
			return SignatureSet{}, err
		}
	}
	var set SignatureSet
	for i, s := range sigs {
		// At most two signatures: the ones before this one, all checked
		// already, are compared directly rather than through a set.
		// The same uuid in another case names the same certificate.
		if slices.ContainsFunc(sigs[:i], func(prev DigestSignature) bool { return strings.EqualFold(prev.CertificateUUID, s.CertificateUUID) }) {
			return SignatureSet{}, Errorf(KindWorkflow, "Документ дважды подписан сертификатом %s", s.CertificateUUID)
		}
		// The sandbox never reads the signature's bytes (§7), so there it
		// is only checked to be Base64, in place, not decoded into a copy.
		var cms []byte
		var err error
		if v.contour == ContourSandbox {
			if !validBase64(s.Base64Encoded) {
				err = errNotBase64
			}
		} else if cms, err = base64.StdEncoding.DecodeString(s.Base64Encoded); err == nil && len(cms) == 0 {
			err = errNotBase64
		}
		if err != nil {
			return SignatureSet{}, &Error{Kind: KindValidation, Message: "Подпись не является строкой Base64",
				FieldNames: []string{fmt.Sprintf("digestSignatures[%d].base64Encoded", i)}, Checks: []string{"base64"}}
		}
		var role SignatureRole
		foreign := false
		if v.contour == ContourSandbox {
			// "In the sandbox the certificate UUID decides the outcome"
			// (§7): partners test with the four published uuids from
			// whichever sandbox user their token is for, so none of them is
			// foreign there.
			role, err = v.sandboxRole(ctx, s)
		} else {
			role, foreign, err = v.verifyOne(ctx, p, digest, i, s, cms, foreignOK)
		}
		if err != nil {
			return SignatureSet{}, err
		}
		set.Roles = append(set.Roles, role)
		if foreign {
			set.Foreign = append(set.Foreign, s.CertificateUUID)
		}
	}
	return set, checkSet(set)
}

// certificateUUIDFormat checks the certificateUuid of item i: required
// (§9.1: "without certificateUuid it is rejected"), and a UUID. It is the
// uuid of a /v1/crypto certificateInfos entry (§9.1, §10), a UUID in both
// official SDKs (java.util.UUID, Joi guid), so one that is no UUID is a
// malformed request, a pattern fault (§13, 400 VALIDATION_FAULT naming the
// field) like an externalId that is none, not a certificate looked up and
// not found (SIGN_CHECK_EXCEPTION, in the sandbox WORKFLOW_FAULT), which
// sent the partner to check a certificate rather than its request.
func certificateUUIDFormat(i int, uuid string) error {
	switch {
	case uuid == "":
		return &Error{Kind: KindValidation, Message: "Не указан certificateUuid подписи",
			FieldNames: []string{fmt.Sprintf("digestSignatures[%d].certificateUuid", i)}, Checks: []string{"required"}}
	case !gost.IsCanonicalUUID(uuid):
		return &Error{Kind: KindValidation, Message: "certificateUuid подписи должен быть UUID",
			FieldNames: []string{fmt.Sprintf("digestSignatures[%d].certificateUuid", i)}, Checks: []string{"UUID"}}
	}
	return nil
}

// errNotBase64 marks a signature that is not Base64 or decodes to nothing.
var errNotBase64 = errors.New("signature is not Base64")

// notBase64 is 1 for every byte outside the standard alphabet, 0 for
// its 64 characters.
var notBase64 = func() (t [256]uint8) {
	for i := range t {
		t[i] = 1
	}
	for _, c := range []byte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/") {
		t[c] = 0
	}
	return t
}()

// validBase64 reports whether base64.StdEncoding.DecodeString(s) would
// succeed with at least one byte, without decoding: characters of the
// standard alphabet, CR and LF anywhere ignored, in whole quanta of four,
// the last of which may end in "=" or "==" with nothing but line breaks
// after it (TestValidBase64 holds it to the decoder).
func validBase64(s string) bool {
	n, pad := 0, 0 // characters counted (line breaks left out), '=' among them
	for i := 0; i < len(s); {
		// Runs of the alphabet, all of a signature but its line breaks
		// and padding, are looked up eight characters at a time.
		j := i
		for ; j+8 <= len(s); j += 8 {
			c := s[j : j+8]
			if notBase64[c[0]]|notBase64[c[1]]|notBase64[c[2]]|notBase64[c[3]]|
				notBase64[c[4]]|notBase64[c[5]]|notBase64[c[6]]|notBase64[c[7]] != 0 {
				break
			}
		}
		for j < len(s) && notBase64[s[j]] == 0 {
			j++
		}
		if j > i {
			if pad > 0 {
				return false // data after the padding
			}
			n += j - i
			i = j
			continue
		}
		switch s[i] {
		case '\n', '\r':
		case '=':
			// Padding starts at the third or fourth character of a
			// quantum; a second '=' must be its fourth.
			if (pad == 0 && n%4 < 2) || (pad > 0 && n%4 != 3) {
				return false
			}
			pad++
			n++
		default:
			return false
		}
		i++
	}
	return n > 0 && n%4 == 0
}

// sandboxRole: in the sandbox the fixed certificate uuid decides the
// outcome and the signature bytes are not checked (reference §7). A fixed
// certificate the operator deactivated (`banking cert deactivate`), or one
// outside its validity period, is no longer valid, and the sandbox answers
// that as it answers any certificate it does not take: 400 WORKFLOW_FAULT
// asking to check the certificate (§7, §13 "sandbox certificate not
// valid"), so /v1/crypto's active:false and the payment's answer agree. A
// fixed uuid the store does not hold (a verifier without the seed) still
// decides the outcome alone.
func (v *signatureVerifier) sandboxRole(ctx context.Context, s DigestSignature) (SignatureRole, error) {
	role, ok := SandboxCertRole(s.CertificateUUID)
	if !ok {
		return "", sandboxCertRefused(s.CertificateUUID)
	}
	if v.certs != nil {
		c, err := v.certs.GetCertificate(ctx, s.CertificateUUID)
		switch {
		case err == nil && !c.UsableAt(v.now()):
			return "", sandboxCertRefused(s.CertificateUUID)
		case err != nil && !errors.Is(err, ErrNotFound):
			return "", fmt.Errorf("certificate %s: %w", s.CertificateUUID, err)
		}
	}
	if err := checkSignType(role, s); err != nil {
		return "", err
	}
	return role, nil
}

// sandboxCertRefused is the sandbox's answer to a certificate it does not
// take (reference §7).
func sandboxCertRefused(uuid string) error {
	return Errorf(KindWorkflow, "Сертификат %s не найден или недействителен. Проверьте сертификат подписи", uuid)
}

func checkSignType(role SignatureRole, s DigestSignature) error {
	switch {
	case role == RoleQualified && s.SignType != SignTypeQualified:
		return Errorf(KindWorkflow, "Для сертификата УКЭП %s нужен signType UKEP_UL", s.CertificateUUID)
	case role != RoleQualified && s.SignType == SignTypeQualified:
		return Errorf(KindWorkflow, "Сертификат %s не является сертификатом УКЭП", s.CertificateUUID)
	}
	return nil
}

// verifyOne checks a signature against the registered certificate: it must
// exist, be active and within its validity period, belong to the token's user, and the CMS must verify
// over the exact digest text. With foreignOK a certificate of someone else
// is not refused but reported (foreign) once its signature has passed every
// other check; without it the refusal comes before the CMS is looked at, as
// it always has for card limits.
//
// A CMS beyond gost.MaxSigners SignerInfos or gost.MaxCertificates
// certificates is refused before any signature in it is checked, as 400
// VALIDATION_FAULT on its base64Encoded (i is its index), like a value
// that is not Base64: it is no signature of the shape §9.2 shows (one
// signer, its certificate), and each SignerInfo would cost a GOST
// verification the client chose. Its own cause tells the partner to fix
// the request rather than the certificate, which SIGN_CHECK_EXCEPTION
// would suggest.
func (v *signatureVerifier) verifyOne(ctx context.Context, p Principal, digest string, i int, s DigestSignature, cms []byte, foreignOK bool) (_ SignatureRole, foreign bool, _ error) {
	c, err := v.certs.GetCertificate(ctx, s.CertificateUUID)
	if errors.Is(err, ErrNotFound) {
		return "", false, Errorf(KindSignCheck, "Сертификат %s не найден", s.CertificateUUID)
	}
	if err != nil {
		return "", false, fmt.Errorf("certificate %s: %w", s.CertificateUUID, err)
	}
	if c.OrgID != p.OrgID {
		return v.verifyOtherOrg(digest, i, s, cms, c, foreignOK)
	}
	cert, err := signingCertificate(c, v.now())
	if err != nil {
		return "", false, err
	}
	if c.UserID != p.UserID {
		if !foreignOK {
			return "", false, Errorf(KindSignCheck, "Сертификат %s не принадлежит пользователю токена", s.CertificateUUID)
		}
		foreign = true
	}
	// Verified with the registered certificate whatever the CMS carries:
	// clients that send no certificate (openssl cms -nocerts, CryptoPro)
	// are taken once the SignerInfo's sid (issuerAndSerialNumber or
	// subjectKeyIdentifier) names it, and a sid naming any other
	// certificate, even one of the same key, is refused.
	if err := gost.VerifyDetached(cms, []byte(digest), cert); err != nil {
		if lerr := cmsLimitError(err, i); lerr != nil {
			return "", false, lerr
		}
		return "", false, signatureRefused(s.CertificateUUID, err)
	}
	if err := checkSignType(c.Role, s); err != nil {
		return "", false, err
	}
	return c.Role, foreign, nil
}

// verifyOtherOrg is verifyOne for a certificate of another organisation
// than the principal's. Its caller learns nothing of it that it could not
// tell of an unknown uuid: whether it exists, is active or in date. Without
// foreignOK it is refused as not found; with it, a CMS that does not verify
// under it is refused so too, and only a signature that verifies (which
// takes the other organisation's key) goes on to the certificate's state
// and is reported foreign, for the document's INVALIDEDS (§9.1).
func (v *signatureVerifier) verifyOtherOrg(digest string, i int, s DigestSignature, cms []byte, c Certificate, foreignOK bool) (SignatureRole, bool, error) {
	notFound := Errorf(KindSignCheck, "Сертификат %s не найден", s.CertificateUUID)
	if !foreignOK {
		return "", false, notFound
	}
	cert, err := certParses.parse(c.DER)
	if err != nil {
		return "", false, fmt.Errorf("stored certificate %s: %w", c.UUID, err)
	}
	if err := gost.VerifyDetached(cms, []byte(digest), cert); err != nil {
		if lerr := cmsLimitError(err, i); lerr != nil {
			return "", false, lerr
		}
		return "", false, notFound
	}
	if _, err := signingCertificate(c, v.now()); err != nil {
		return "", false, err
	}
	if err := checkSignType(c.Role, s); err != nil {
		return "", false, err
	}
	return c.Role, true, nil
}

// cmsLimitError is the VALIDATION_FAULT on digestSignatures[i] of a CMS
// refused for its count of SignerInfos or certificates before any was
// checked, else nil.
func cmsLimitError(err error, i int) error {
	field := []string{fmt.Sprintf("digestSignatures[%d].base64Encoded", i)}
	switch {
	case errors.Is(err, gost.ErrTooManySigners):
		return &Error{Kind: KindValidation, FieldNames: field, Checks: []string{fmt.Sprintf("at most %d SignerInfos", gost.MaxSigners)},
			Message: fmt.Sprintf("Подпись содержит больше %d подписантов (SignerInfo): каждая подпись — CMS одного сертификата", gost.MaxSigners)}
	case errors.Is(err, gost.ErrTooManyCertificates):
		return &Error{Kind: KindValidation, FieldNames: field, Checks: []string{fmt.Sprintf("at most %d certificates", gost.MaxCertificates)},
			Message: fmt.Sprintf("Подпись содержит больше %d сертификатов", gost.MaxCertificates)}
	}
	return nil
}

// signatureRefused is the SIGN_CHECK_EXCEPTION of a CMS that does not
// verify under the certificate uuid names, saying which check failed. The
// bare "did not verify" left a partner guessing between a wrong key, a
// signature of another text and a value that is no CMS at all; the first
// needs another certificate, the others a change in how the client signs
// (the usual ones: a trailing newline or CRLF line ends added to the
// digest, openssl cms without -binary, or the raw signature value of
// openssl dgst instead of the SignedData reference §9.2 shows). Each
// reason is about the client's own input, so telling it leaks nothing.
func signatureRefused(uuid string, err error) error {
	var reason string
	switch {
	case errors.Is(err, gost.ErrContentMismatch):
		reason = "подписан не текст дайджеста документа (messageDigest не совпадает): подписывайте байты дайджеста без изменений, " +
			"без перевода строки в конце и без замены LF на CRLF (openssl cms -sign -binary)"
	case errors.Is(err, gost.ErrSignerNotFound):
		reason = "подписант CMS (issuerAndSerialNumber или subjectKeyIdentifier) — не этот сертификат"
	case errors.Is(err, gost.ErrNotGOST):
		reason = "алгоритмы хеширования и подписи CMS не соответствуют ключу сертификата " +
			"(ГОСТ Р 34.11-2012 и ГОСТ Р 34.10-2012 той же длины, что ключ)"
	case errors.Is(err, gost.ErrMalformed):
		reason = "base64Encoded не является корректной подписью CMS SignedData (RFC 5652), " +
			"например выводом openssl cms -sign -binary -outform DER"
	default:
		reason = "значение подписи не соответствует ключу сертификата и подписанным данным"
	}
	// The reason is the bank's own text, added after Errorf so that the
	// bound on echoed client values does not cut it short.
	e := Errorf(KindSignCheck, "Подпись сертификатом %s не прошла проверку", uuid)
	e.Message += ": " + reason
	return e
}

// checkSet enforces the allowed signature sets (reference §9.1): one sole
// or qualified signature alone, or first and second in any order.
func checkSet(set SignatureSet) error {
	if len(set.Roles) < 2 {
		return nil
	}
	a, b := set.Roles[0], set.Roles[1]
	if (a == RoleFirst && b == RoleSecond) || (a == RoleSecond && b == RoleFirst) {
		return nil
	}
	if a == b {
		return Errorf(KindWorkflow, "Две подписи одной роли (%s) недопустимы", a)
	}
	return Errorf(KindWorkflow, "Подпись единоличного органа или УКЭП не может сочетаться с другими подписями")
}
