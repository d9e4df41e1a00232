package banking

import (
	"fmt"
	"time"

	"partnerapi/internal/gost"
)

// UsableAt reports whether the bank takes signatures made with c at now:
// the operator has it active (`banking cert activate|deactivate`) and now
// falls within the certificate's own validity period. It is what
// /v1/crypto reports as certificateInfos[].active (reference §10), so a
// partner sees there whether a signature with it would be refused.
func (c Certificate) UsableAt(now time.Time) bool {
	_, err := signingCertificate(c, now)
	return err == nil
}

// signingCertificate returns the parse of c when signatures made with it
// are taken at now. A certificate the operator deactivated, or one outside
// its notBefore/notAfter, is refused alike as inactive: KindSignCheck,
// reference §13 "certificate not found or inactive". A stored certificate
// that does not parse is the bank's fault, an internal error.
func signingCertificate(c Certificate, now time.Time) (*gost.Certificate, error) {
	if !c.Active {
		return nil, Errorf(KindSignCheck, "Сертификат %s не активен", c.UUID)
	}
	cert, err := certParses.parse(c.DER)
	if err != nil {
		return nil, fmt.Errorf("stored certificate %s: %w", c.UUID, err)
	}
	if !cert.ValidAt(now) {
		return nil, Errorf(KindSignCheck, "Сертификат %s не активен: срок его действия с %s по %s",
			c.UUID, cert.NotBefore.UTC().Format(time.RFC3339), cert.NotAfter.UTC().Format(time.RFC3339))
	}
	return cert, nil
}

// CertificateActive is c.UsableAt on the identity service's clock: what
// /v1/crypto reports as the certificate's active flag.
func (id *Identity) CertificateActive(c Certificate) bool {
	return c.UsableAt(id.now())
}
