package banking

import (
	"sync"

	"partnerapi/internal/gost"
)

// parsedCertificates keeps each stored certificate's parse, keyed by its
// exact bytes: every signed create and every JWS request checks against a
// stored certificate, and parsing its DER (ASN.1, the x509 parse, the
// public point) cost about as much as the GOST verification itself. The
// key is the DER itself, so a cached parse can never be of other bytes;
// what the store says of the certificate (active, owner, role) is still
// read for each request. Parses are read-only once made and are shared.
type parsedCertificates struct {
	mu sync.RWMutex
	m  map[string]*gost.Certificate
}

// maxParsedCertificates bounds the cache; past it the cache starts over, as
// the stores' read caches do.
const maxParsedCertificates = 10_000

var certParses parsedCertificates

// parse returns gost.ParseCertificate(der), from the cache when der was
// parsed before. Failures are not cached.
func (c *parsedCertificates) parse(der []byte) (*gost.Certificate, error) {
	c.mu.RLock()
	cert := c.m[string(der)]
	c.mu.RUnlock()
	if cert != nil {
		return cert, nil
	}
	cert, err := gost.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxParsedCertificates {
		c.m = make(map[string]*gost.Certificate)
	}
	c.m[string(der)] = cert
	c.mu.Unlock()
	return cert, nil
}
