package gost

import (
	"bytes"
	"crypto/rand"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"io"
	"math/big"
	mathrand "math/rand/v2"
	"testing"
	"time"
)

// fuzzCorpus is the structure-aware seed set of the GOST fuzz targets:
// certificates, requests and SignedData made with the package's own
// signing code for 256- and 512-bit keys, with and without extensions,
// attributes and signed attributes, next to the OpenSSL golden files.
// Random byte mutations of a few hand-written seeds rarely got past the DER
// structure (5 to 11 new inputs in 45 s); these seeds start inside it.
//
// It also records everything that was signed, so that the targets can
// hold a property that can fail: a signature that verifies must be over
// bytes some key of ours signed, and a SignedData that verifies must pair
// a key of ours with content that key signed.
type fuzzCorpus struct {
	certs [][]byte // DER
	csrs  [][]byte // DER PKCS#10, and CMS SignedData carrying one
	cms   []fuzzCMS

	// issuers are the certificates a parsed certificate is checked
	// against; signers the certificates VerifyDetachedSigners is given.
	issuers []*Certificate
	signers []*Certificate

	// signedTBS holds the to-be-signed bytes of every certificate and
	// request of the corpus; signedContent holds raw public key ‖ 0 ‖
	// content for every detached signature.
	signedTBS     map[string]bool
	signedContent map[string]bool
}

type fuzzCMS struct {
	der, content []byte
}

func signedPair(pub *PublicKey, content []byte) string {
	return string(MarshalPublicKeyRaw(pub)) + "\x00" + string(content)
}

func newFuzzCorpus(tb testing.TB) *fuzzCorpus {
	tb.Helper()
	c := &fuzzCorpus{signedTBS: map[string]bool{}, signedContent: map[string]bool{}}
	addCert := func(cert *Certificate) {
		c.certs = append(c.certs, cert.Raw)
		c.issuers = append(c.issuers, cert)
		c.signedTBS[string(cert.X509.RawTBSCertificate)] = true
	}
	addCSR := func(der []byte) {
		req, err := ParseCertificateRequest(der)
		if err != nil {
			tb.Fatal(err)
		}
		c.csrs = append(c.csrs, der)
		c.signedTBS[string(req.RawTBS)] = true
	}

	// The OpenSSL golden files.
	digest := readTestdata(tb, "digest.txt")
	for _, name := range []string{"openssl-256-cpA.cert.pem", "openssl-512-A.cert.pem"} {
		cert, err := ParseCertificate(readTestdata(tb, name))
		if err != nil {
			tb.Fatal(err)
		}
		addCert(cert)
		c.signers = append(c.signers, cert)
		c.signedContent[signedPair(cert.PublicKey, digest)] = true
	}
	addCSR(readTestdata(tb, "openssl-256-cpA.csr.der"))
	// The request in a SignedData is attached content: it verifies with
	// that content given, as a detached signature over it.
	p7s := readTestdata(tb, "openssl-256-cpA.csr.p7s")
	addCSR(p7s)
	signers, err := VerifyDetachedSigners(p7s, attachedContent(p7s), nil)
	if err != nil {
		tb.Fatal(err)
	}
	for _, s := range signers {
		c.signedContent[signedPair(s.Certificate.PublicKey, attachedContent(p7s))] = true
	}
	c.cms = append(c.cms, fuzzCMS{p7s, attachedContent(p7s)})
	for _, name := range []string{"openssl-256-cpA.p7s", "openssl-512-A-noattr.p7s", "openssl-256-cpA-nocerts.p7s", "openssl-256-cpA-nocerts-keyid.p7s"} {
		c.cms = append(c.cms, fuzzCMS{readTestdata(tb, name), digest})
	}

	// Keys come from a seeded generator and certificates carry fixed
	// serials and dates: the fuzzing workers build the corpus again, and
	// the bytes they record as signed must be those of the coordinator's
	// seeds. Signatures stay random; what they cover does not.
	rng := mathrand.NewChaCha8([32]byte{'g', 'o', 's', 't'})
	for i, params := range []*Params{TC26256A, CryptoProA, TC26512A} {
		caKey := fuzzKey(tb, params, rng)
		ca := fuzzCertificate(tb, caKey, "fuzz CA", caKey, nil, int64(10*i+1), true)
		addCert(ca)
		v1Key := fuzzKey(tb, params, rng)
		addCert(fuzzCertificate(tb, v1Key, "v1", v1Key, nil, int64(10*i+2), false))

		key := fuzzKey(tb, params, rng)
		plain, err := CreateCertificateRequest(key, "signer", "")
		if err != nil {
			tb.Fatal(err)
		}
		addCSR(plain)
		withID, err := CreateCertificateRequest(key, "Иванов Иван", "A00ESYFHs.ИВАНОВ И И")
		if err != nil {
			tb.Fatal(err)
		}
		addCSR(withID)
		cert := fuzzCertificate(tb, key, "Иванов Иван", caKey, ca, int64(10*i+3), true)
		addCert(cert)
		c.signers = append(c.signers, cert)

		for _, opt := range []SignOptions{{}, {NoSignedAttributes: true}, {BySubjectKeyID: true}, {NoCertificate: true}, {NoSignedAttributes: true, NoCertificate: true, BySubjectKeyID: true}} {
			opt.SigningTime = fuzzNotBefore
			for _, content := range [][]byte{digest, nil, []byte("x")} {
				der, err := SignDetachedWithOptions(content, cert, key, opt)
				if err != nil {
					tb.Fatal(err)
				}
				c.cms = append(c.cms, fuzzCMS{der, content})
				c.signedContent[signedPair(key.Public(), content)] = true
			}
		}
	}
	return c
}

var fuzzNotBefore = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func fuzzKey(tb testing.TB, params *Params, rng io.Reader) *PrivateKey {
	key, err := GenerateKey(params, rng)
	if err != nil {
		tb.Fatal(err)
	}
	return key
}

// fuzzCertificate is a certificate for key with subject CN=cn, signed by
// issuerKey (issuer nil: self-signed), whose to-be-signed bytes depend on
// their arguments alone. withExtensions makes it X.509 v3 with the subject
// key identifier, and for a CA basicConstraints and keyUsage as
// SelfSignedCertificate writes them; without, it is X.509 v1: no version
// field, no extensions, which neither SelfSignedCertificate nor
// IssueCertificate makes.
func fuzzCertificate(tb testing.TB, key *PrivateKey, cn string, issuerKey *PrivateKey, issuer *Certificate, serial int64, withExtensions bool) *Certificate {
	tb.Helper()
	name := mustMarshal(pkix.Name{CommonName: cn}.ToRDNSequence())
	issuerName := name
	if issuer != nil {
		issuerName = issuer.RawSubject
	}
	sigAlg := derWrap(tagSequence, mustMarshal(signatureOID(issuerKey.Params)))
	validity := derWrap(tagSequence, mustMarshal(fuzzNotBefore), mustMarshal(fuzzNotBefore.AddDate(30, 0, 0)))
	fields := [][]byte{mustMarshal(big.NewInt(serial)), sigAlg, issuerName, validity, name, MarshalPublicKey(&key.PublicKey)}
	if withExtensions {
		ski := Streebog256(MarshalPublicKeyRaw(&key.PublicKey))
		exts := [][]byte{extension(oidExtSubjectKeyID, false, mustMarshal(ski[:20]))}
		if issuer == nil {
			exts = append(exts,
				extension(oidExtBasicConstr, true, mustMarshal(struct{ CA bool }{true})),
				extension(oidExtKeyUsage, true, mustMarshal(asn1.BitString{Bytes: []byte{0xc4}, BitLength: 6})))
		} else {
			exts = append(exts, extension(oidExtAuthorityKeyID, false, derWrap(tagSequence, derWrap(tagContext0Prm, issuer.SubjectKeyID))))
		}
		fields = append([][]byte{derWrap(tagContext0, mustMarshal(2))}, fields...)
		fields = append(fields, derWrap(0xa3, derWrap(tagSequence, exts...)))
	}
	tbs := derWrap(tagSequence, fields...)
	h := newHashFor(issuerKey.Params)
	h.Write(tbs)
	sig, err := Sign(issuerKey, h.Sum(nil), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	cert, err := ParseCertificate(derWrap(tagSequence, tbs, sigAlg, derWrap(tagBitString, []byte{0}, sig)))
	if err != nil {
		tb.Fatal(err)
	}
	return cert
}

// checkCertificate holds an accepted certificate to its properties: a key
// on its curve, the same certificate again from its DER and its PEM, and
// a signature by one of the corpus' keys that verifies only over
// to-be-signed bytes that key signed.
func (c *fuzzCorpus) checkCertificate(t *testing.T, cert *Certificate) {
	if cert.PublicKey == nil || !cert.PublicKey.Params.IsOnCurve(cert.PublicKey.X, cert.PublicKey.Y) {
		t.Fatal("accepted certificate with an invalid key")
	}
	for _, form := range [][]byte{cert.Raw, cert.PEM()} {
		again, err := ParseCertificate(form)
		if err != nil {
			t.Fatalf("accepted certificate does not parse again: %v", err)
		}
		if !bytes.Equal(again.Raw, cert.Raw) || again.SerialHex != cert.SerialHex || again.Subject != cert.Subject ||
			again.Issuer != cert.Issuer || !again.PublicKey.Equal(cert.PublicKey) || !bytes.Equal(again.SubjectKeyID, cert.SubjectKeyID) {
			t.Fatalf("certificate parses differently again: %+v, then %+v", cert, again)
		}
	}
	for _, issuer := range c.issuers {
		if cert.CheckSignatureFrom(issuer) == nil && !c.signedTBS[string(cert.X509.RawTBSCertificate)] {
			t.Fatalf("signature of %s verifies over to-be-signed bytes %s never signed", issuer.Subject, cert.Subject)
		}
	}
}

// checkRequest holds an accepted request to its properties, as
// checkCertificate does for certificates.
func (c *fuzzCorpus) checkRequest(t *testing.T, req *CertificateRequest) {
	if req.PublicKey == nil || !req.PublicKey.Params.IsOnCurve(req.PublicKey.X, req.PublicKey.Y) {
		t.Fatal("accepted a request with an invalid key")
	}
	for _, form := range [][]byte{req.Raw, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: req.Raw})} {
		again, err := ParseCertificateRequest(form)
		if err != nil {
			t.Fatalf("accepted request does not parse again: %v", err)
		}
		if !bytes.Equal(again.RawTBS, req.RawTBS) || again.Subject != req.Subject || again.BicryptID != req.BicryptID || !again.PublicKey.Equal(req.PublicKey) {
			t.Fatalf("request parses differently again: %+v, then %+v", req, again)
		}
	}
	if req.CheckSignature() == nil && !c.signedTBS[string(req.RawTBS)] {
		t.Fatalf("request signature verifies over to-be-signed bytes never signed (subject %s)", req.Subject)
	}
}

// attachedContent is the encapsulated content of a SignedData, nil when
// it has none or does not parse.
func attachedContent(data []byte) []byte {
	sd, err := parseSignedData(decodeCMSInput(data))
	if err != nil {
		return nil
	}
	return sd.eContent
}

// checkSignedData verifies data over content with the embedded
// certificate and with each signer's: whatever verifies must name signers
// and pair a key with content that key signed. Nil content stands for the
// content, as VerifyDetachedSigners takes it (never the attached content).
func (c *fuzzCorpus) checkSignedData(t *testing.T, data, content []byte) {
	for _, cert := range append([]*Certificate{nil}, c.signers...) {
		signers, err := VerifyDetachedSigners(data, content, cert)
		if err != nil {
			continue
		}
		if len(signers) == 0 {
			t.Fatal("verified without signers")
		}
		for _, s := range signers {
			if cert != nil && s.Certificate != cert {
				t.Fatal("verified with the given certificate, but not by it")
			}
			signed := content
			if signed == nil {
				signed = []byte{}
			}
			if !c.signedContent[signedPair(s.Certificate.PublicKey, signed)] {
				t.Fatalf("verified content %q that %s's key never signed", content, s.Certificate.Subject)
			}
		}
	}
}

// derTree is a DER element decoded far enough to change one element and
// encode the whole again with every enclosing length right, so that a
// mutation stays one field away from a valid input.
type derTree struct {
	tag     byte
	content []byte     // primitive elements, or a constructed one's replaced content
	kids    []*derTree // constructed elements; nil once the content is replaced
}

func parseDERTree(b []byte, depth int) ([]*derTree, bool) {
	var out []*derTree
	for len(b) > 0 {
		el, n, err := parseTLV(b, 0)
		if err != nil || depth > 20 {
			return nil, false
		}
		node := &derTree{tag: el.tag}
		if el.tag&0x20 != 0 {
			kids, ok := parseDERTree(el.content, depth+1)
			if !ok {
				return nil, false
			}
			node.kids = kids
		} else {
			node.content = el.content
		}
		out = append(out, node)
		b = b[n:]
	}
	return out, true
}

func (n *derTree) encode() []byte {
	if n.kids == nil {
		return derWrap(n.tag, n.content)
	}
	parts := make([][]byte, len(n.kids))
	for i, k := range n.kids {
		parts[i] = k.encode()
	}
	return derWrap(n.tag, parts...)
}

// walk lists the elements depth first with the list each one is in.
func (n *derTree) walk(visit func(parent *derTree, i int)) {
	for i, k := range n.kids {
		visit(n, i)
		k.walk(visit)
	}
}

// editDERField changes one element of der, which must be one DER element,
// and encodes it again with every enclosing length right: field picks the
// element depth first, op whether its content becomes repl, it is dropped,
// or it is repeated.
func editDERField(tb testing.TB, der []byte, field uint16, op uint8, repl []byte) []byte {
	top, ok := parseDERTree(der, 0)
	if !ok || len(top) != 1 {
		tb.Fatal("seed is not one DER element")
	}
	type site struct {
		parent *derTree
		i      int
	}
	var sites []site
	top[0].walk(func(parent *derTree, i int) { sites = append(sites, site{parent, i}) })
	at := sites[int(field)%len(sites)]
	el := at.parent.kids[at.i]
	switch op % 3 {
	case 0:
		el.kids = nil
		el.content = repl
	case 1:
		at.parent.kids = append(at.parent.kids[:at.i:at.i], at.parent.kids[at.i+1:]...)
	case 2:
		at.parent.kids = append(at.parent.kids[:at.i+1:at.i+1], at.parent.kids[at.i:]...)
	}
	return top[0].encode()
}
