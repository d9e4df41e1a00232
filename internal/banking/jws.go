package banking

import (
	"context"
	"errors"
	"fmt"
	"time"

	"partnerapi/internal/gost"
)

// JWSCertificates finds the certificate a JWS kid names for the principal's
// user; unknown or inactive certificates give KindSignCheck.
type JWSCertificates interface {
	JWSCertificate(ctx context.Context, p Principal, kid string) (*gost.Certificate, error)
}

// JWSVerifier checks the compact JWS transport signature of request bodies
// sent as application/jose (reference §9.6). It is one check for every
// operation that takes such bodies, card limits and payment documents
// alike, so they answer the same faults, read the signature bytes in the
// same layout and accept the same certificates.
type JWSVerifier struct {
	contour  string
	reversed bool
	certs    JWSCertificates
}

// NewJWSVerifier builds the check for a contour ("" means sandbox);
// reversed reads signatures byte-reversed (--banking-jws-reversed), and
// certs finds the certificate a kid names (nil: none is found).
func NewJWSVerifier(contour string, reversed bool, certs JWSCertificates) *JWSVerifier {
	if contour == "" {
		contour = ContourSandbox
	}
	return &JWSVerifier{contour: contour, reversed: reversed, certs: certs}
}

// Open checks compact and returns its payload: kid missing or not a UUID →
// WORKFLOW_FAULT, whatever the alg; a signature that does not verify, a
// wrong alg, or a certificate that is unknown, inactive or not the
// principal's (its organisation's, and its user's when the token has one:
// JWSCertificates decides) → SIGN_CHECK_EXCEPTION; a body that is not a
// JWS → DESERIALIZATION_FAULT.
func (v *JWSVerifier) Open(ctx context.Context, p Principal, compact []byte) ([]byte, error) {
	j, err := gost.ParseJWS(string(compact))
	switch {
	case errors.Is(err, gost.ErrJWSMissingKid), errors.Is(err, gost.ErrJWSInvalidKid):
		return nil, Errorf(KindWorkflow, "Заголовок JWS: kid обязателен и должен быть UUID сертификата")
	case errors.Is(err, gost.ErrJWSWrongAlg):
		return nil, Errorf(KindSignCheck, "Заголовок JWS: alg должен быть gost34.10-2012")
	case errors.Is(err, gost.ErrJWSNotBase64URL):
		return nil, &Error{Kind: KindDeserialization, Message: "Тело запроса не является JWS compact serialization: " +
			"заголовок, данные и подпись кодируются base64url без дополнения \"=\" (RFC 7515 §2)"}
	case err != nil:
		return nil, &Error{Kind: KindDeserialization, Message: "Тело запроса не является JWS compact serialization"}
	}
	kid := j.Header.Kid
	// In the sandbox a JWS under one of the reference's fixed test
	// certificates (SandboxCertRoles, any case) is accepted as signed, the
	// way the provider's sandbox accepts them for digest signatures: they
	// are every sandbox user's (§7), so no owner is checked either.
	// One the operator deactivated is refused as any inactive certificate
	// is (§9.6: SIGN_CHECK_EXCEPTION).
	if _, fixed := SandboxCertRole(kid); v.contour == ContourSandbox && fixed {
		if st, ok := v.certs.(sandboxCertificateState); ok {
			if err := st.SandboxCertificateRefusal(ctx, kid); err != nil {
				return nil, err
			}
		}
		return j.Payload, nil
	}
	if v.certs == nil {
		return nil, Errorf(KindSignCheck, "Сертификат %s не найден", kid)
	}
	cert, err := v.certs.JWSCertificate(ctx, p, kid)
	if err != nil {
		if KindOf(err) == KindInternal {
			return nil, err
		}
		return nil, Errorf(KindSignCheck, "Сертификат %s не найден или не активен", kid)
	}
	if err := j.VerifyWithOptions(cert, gost.JWSOptions{Reversed: v.reversed}); err != nil {
		return nil, jwsSignatureRefused(kid, len(j.Signature), cert)
	}
	return j.Payload, nil
}

// OpenJWS checks a card-limit request's JWS with the card area's
// JWSVerifier (JWSVerifier.Open).
func (c *Cards) OpenJWS(ctx context.Context, p Principal, compact []byte) ([]byte, error) {
	return c.jws.Open(ctx, p, compact)
}

// JWS is the card area's JWSVerifier, built from its contour, its
// JWSReversed setting and its certificates; the payment operations verify
// their application/jose bodies with the same one.
func (c *Cards) JWS() *JWSVerifier { return c.jws }

// JWSRequired reports whether the partner must send card-limit requests as
// application/jose (415 JWS_EXCEPTED otherwise). It is the card area's
// setting only: reference §1 and §9.6 name the 415 for card-limit
// operations, so payment operations take JSON from every partner.
func (c *Cards) JWSRequired(partnerID string) bool {
	return c.cfg.JWSRequired != nil && c.cfg.JWSRequired(partnerID)
}

// CertificateGetter is the part of IDENTITY's store JWS verification needs.
type CertificateGetter interface {
	GetCertificate(ctx context.Context, uuid string) (Certificate, error)
}

// IdentityJWSCertificates finds JWS certificates among IDENTITY's records:
// the certificate must exist, be active and within its validity period at
// Now (nil: the wall clock), and belong to the principal's user (or, for
// tokens without a user, organisation).
type IdentityJWSCertificates struct {
	Store CertificateGetter
	Now   func() time.Time
}

func (c IdentityJWSCertificates) now() time.Time {
	if c.Now == nil {
		return time.Now()
	}
	return c.Now()
}

// JWSCertificate implements JWSCertificates.
func (c IdentityJWSCertificates) JWSCertificate(ctx context.Context, p Principal, kid string) (*gost.Certificate, error) {
	rec, err := c.Store.GetCertificate(ctx, kid)
	if err != nil {
		if !errors.Is(err, ErrNotFound) && !isNotFound(err) {
			return nil, err
		}
		return nil, Errorf(KindSignCheck, "Сертификат %s не найден", kid)
	}
	if rec.OrgID != p.OrgID || (p.UserID != "" && rec.UserID != p.UserID) {
		return nil, Errorf(KindSignCheck, "Сертификат %s не активен или принадлежит другому пользователю", kid)
	}
	cert, err := signingCertificate(rec, c.now())
	if err != nil && KindOf(err) != KindSignCheck {
		return nil, Errorf(KindSignCheck, "Сертификат %s не разбирается: %v", kid, err)
	}
	return cert, err
}

// sandboxCertificateState is what JWSCertificates backed by the store can
// tell of a sandbox certificate: whether the operator deactivated it. The
// sandbox takes a fixed kid without checking the signature or the owner,
// but not once its certificate is inactive.
type sandboxCertificateState interface {
	SandboxCertificateRefusal(ctx context.Context, kid string) error
}

// SandboxCertificateRefusal is a KindSignCheck error when the store holds
// the certificate kid and it is inactive or outside its validity period; nil when it is active or the
// store does not hold it (the fixed uuid then decides alone).
func (c IdentityJWSCertificates) SandboxCertificateRefusal(ctx context.Context, kid string) error {
	rec, err := c.Store.GetCertificate(ctx, kid)
	switch {
	case err == nil && !rec.UsableAt(c.now()):
		return Errorf(KindSignCheck, "Сертификат %s не активен", kid)
	case err != nil && !errors.Is(err, ErrNotFound) && !isNotFound(err):
		return err
	}
	return nil
}

// isNotFound reports a store's not-found answer whatever kind it chose.
func isNotFound(err error) bool {
	switch KindOf(err) {
	case KindNotFound, KindDataNotFound, KindSignCheck:
		return true
	}
	return false
}

// jwsSignatureRefused is the SIGN_CHECK_EXCEPTION of a JWS signature that
// does not verify under the certificate kid names. A signature of another
// length than the key's s‖r (64 bytes for a 256-bit key, 128 for a
// 512-bit one) says the signer used another key size, or an encoding
// other than §9.6's raw s‖r (an ASN.1 SEQUENCE of r and s, say); the
// message names both lengths, as the bare "did not verify" did not.
func jwsSignatureRefused(kid string, sigLen int, cert *gost.Certificate) error {
	e := Errorf(KindSignCheck, "Подпись JWS сертификатом %s не прошла проверку", kid)
	if cert == nil || cert.PublicKey == nil {
		return e
	}
	if want := cert.PublicKey.Bits() / 4; sigLen != want {
		e.Message += fmt.Sprintf(": подпись %d байт, а ключу сертификата (%d бит) нужна подпись s‖r из %d байт",
			sigLen, cert.PublicKey.Bits(), want)
	} else {
		e.Message += ": подпись не соответствует ключу сертификата и подписанным заголовку и данным"
	}
	return e
}
