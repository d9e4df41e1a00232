package banking

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/asn1"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"golang.org/x/text/encoding/charmap"

	"partnerapi/internal/gost"
)

// memCertRequests is a CertRequestStore in memory, enough for the
// service's rules; the SQL stores have their own conformance test
// (bankingsql's TestCertRequestStoreConformance and
// TestActivateEIORequestMarksExecutive), whose rules it follows.
type memCertRequests struct {
	mu    sync.Mutex
	rows  map[string]CertRequest
	certs []Certificate
	// executives are the users an activated EIO request made their
	// organisation's sole executive body, by id: the SQL stores set
	// banking_users.executive in the activation's transaction.
	executives map[string]bool
}

func (m *memCertRequests) CreateCertRequest(_ context.Context, r CertRequest) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.rows[r.OrgID+"/"+r.ExternalID]; ok {
		return ErrDuplicate
	}
	m.rows[r.OrgID+"/"+r.ExternalID] = r
	return nil
}

func (m *memCertRequests) GetCertRequest(_ context.Context, org, id string) (CertRequest, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.rows[org+"/"+id]
	if !ok {
		return CertRequest{}, ErrNotFound
	}
	return r, nil
}

func (m *memCertRequests) MarkCertRequestPrinted(ctx context.Context, org, id string, at time.Time) (CertRequest, error) {
	r, err := m.GetCertRequest(ctx, org, id)
	if err == nil && r.Status == CertRequestCreated {
		r.Status, r.PrintedAt = CertRequestPrinted, at
		m.mu.Lock()
		m.rows[org+"/"+id] = r
		m.mu.Unlock()
	}
	return r, err
}

func (m *memCertRequests) ActivateCertRequest(ctx context.Context, org, id string, at time.Time, c Certificate) (CertRequest, error) {
	r, err := m.GetCertRequest(ctx, org, id)
	if err != nil {
		return r, err
	}
	if r.Status == CertRequestActivated {
		return r, ErrDuplicate
	}
	r.Status, r.ActivatedAt, r.CertUUID = CertRequestActivated, at, c.UUID
	m.mu.Lock()
	m.rows[org+"/"+id], m.certs = r, append(m.certs, c)
	if r.EIO {
		m.executives[r.OwnerID] = true
	}
	m.mu.Unlock()
	return r, nil
}

type certDirectory struct{}

func (certDirectory) GetUserByLogin(_ context.Context, login string) (User, error) {
	if login == SandboxUserLogin {
		return User{ID: SandboxUserID, OrgID: SandboxOrgID, Login: login}, nil
	}
	return User{}, ErrNotFound
}

func (certDirectory) GetOrg(context.Context, string) (Organisation, error) {
	return Organisation{ID: SandboxOrgID, Name: "ООО «Песочница»", INN: SandboxOrgINN, OGRN: SandboxOrgOGRN}, nil
}

// goldenCSR is the OpenSSL-made request of the gost package's golden files.
func goldenCSR(t *testing.T) []byte {
	t.Helper()
	der, err := os.ReadFile(filepath.Join("..", "gost", "testdata", "openssl-256-cpA.csr.der"))
	if err != nil {
		t.Fatal(err)
	}
	return der
}

func newCertService(t *testing.T, contour string) (*CertRequests, *memCertRequests, *time.Time) {
	t.Helper()
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	ca, err := NewBankKey(now)
	if err != nil {
		t.Fatal(err)
	}
	store := &memCertRequests{rows: map[string]CertRequest{}, executives: map[string]bool{}}
	return &CertRequests{Store: store, Directory: certDirectory{}, CA: ca, Contour: contour, Now: func() time.Time { return now }}, store, &now
}

var sandboxPrincipal = Principal{OrgID: SandboxOrgID, UserID: SandboxUserID}

func certBody(der []byte) CertRequestBody {
	return CertRequestBody{ExternalID: "0A000000-0000-4000-8000-000000000001", Number: "12", UserName: "Иванов Иван Иванович",
		OrgName: "ООО «Песочница»", Email: "ivanov@example.com", UserPosition: "Генеральный директор",
		PKCS10: &PKCS10{BicryptID: "A00TEST", CMS: base64.StdEncoding.EncodeToString(der)}}
}

// TestCertRequestWireGolden holds the create answer, the state answers and
// the printed form of one request, at fixed times, to golden files
// (go test -run CertRequestWireGolden -update rewrites them).
func TestCertRequestWireGolden(t *testing.T) {
	s, _, now := newCertService(t, ContourSandbox)
	created, err := s.Create(context.Background(), sandboxPrincipal, certBody(goldenCSR(t)), false)
	if err != nil {
		t.Fatal(err)
	}
	*now = now.Add(time.Hour)
	r, err := s.Print(context.Background(), sandboxPrincipal, created.ExternalID)
	if err != nil {
		t.Fatal(err)
	}
	printed, _ := json.MarshalIndent(r.State(), "", "  ")
	form := CertRequestFormPDF(r, Organisation{Name: "ООО «Песочница»", INN: SandboxOrgINN, OGRN: SandboxOrgOGRN})
	createdJSON, _ := json.MarshalIndent(created, "", "  ")
	for name, got := range map[string][]byte{"certreq_create.json": createdJSON, "certreq_state_printed.json": printed, "certreq_form.pdf": form} {
		path := filepath.Join("testdata", name)
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the golden file:\n%s", name, got)
		}
	}
}

// TestCertRequestFormIsAReadablePDF: every cross-reference entry points at
// its object, the stream's length is right, and the page's text, decoded
// as the font's windows-1251 encoding says, carries the request's fields
// and its public key.
func TestCertRequestFormIsAReadablePDF(t *testing.T) {
	der := goldenCSR(t)
	csr, _ := gost.ParseCertificateRequest(der)
	r := CertRequest{ExternalID: "0a000000-0000-4000-8000-000000000001", Number: "12", UserName: "Иванов Ёжик (Иванович)", CSR: der,
		CreatedAt: time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)}
	pdf := CertRequestFormPDF(r, Organisation{Name: "ООО «Песочница»", INN: SandboxOrgINN})
	xref := regexp.MustCompile(`(?m)^(\d{10}) 00000 n $`).FindAllSubmatch(pdf, -1)
	if len(xref) != 5 {
		t.Fatalf("%d xref entries", len(xref))
	}
	for i, e := range xref {
		off, _ := strconv.Atoi(string(e[1]))
		if !bytes.HasPrefix(pdf[off:], []byte(strconv.Itoa(i+1)+" 0 obj")) {
			t.Fatalf("xref entry %d points at %.20q", i+1, pdf[off:])
		}
	}
	m := regexp.MustCompile(`(?s)/Length (\d+) >>\nstream\n(.*)\nendstream`).FindSubmatch(pdf)
	if m == nil {
		t.Fatal("no content stream")
	}
	if n, _ := strconv.Atoi(string(m[1])); n != len(m[2]) {
		t.Fatalf("stream /Length %d, %d bytes", n, len(m[2]))
	}
	text, err := charmap.Windows1251.NewDecoder().Bytes(m[2])
	if err != nil {
		t.Fatal(err)
	}
	key := spaced(bytesToUpperHex(gost.MarshalPublicKeyRaw(csr.PublicKey))[:64])
	for _, want := range []string{`Иванов Ёжик \(Иванович\)`, "ООО «Песочница»", SandboxOrgINN, "№", key, "CN=openssl CSR,O=Test Bank"} {
		if !bytes.Contains(text, []byte(want)) {
			t.Errorf("the form lacks %q", want)
		}
	}
}

func bytesToUpperHex(b []byte) string {
	const digits = "0123456789ABCDEF"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}

// TestCertRequestActivationRules: the state machine's refusals and the
// issued certificate's properties, per contour.
func TestCertRequestActivationRules(t *testing.T) {
	ctx := context.Background()
	s, store, _ := newCertService(t, ContourTest)
	b := certBody(goldenCSR(t))
	if _, err := s.Create(ctx, sandboxPrincipal, b, false); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, sandboxPrincipal, b, false); KindOf(err) != KindWorkflow {
		t.Fatalf("duplicate: %v", err)
	}
	// The id is matched in any case, as stored in lower case.
	r, err := s.Activate(ctx, sandboxPrincipal, b.ExternalID)
	if err != nil || r.Status != CertRequestActivated || len(store.certs) != 1 {
		t.Fatalf("activate from CREATED in the test contour: %+v %v", r, err)
	}
	c := store.certs[0]
	cert, err := gost.ParseCertificate(c.DER)
	if err != nil || cert.CheckSignatureFrom(s.CA.Cert) != nil || c.Role != RoleSoleAuthority || c.TypeName != "TOKEN" || !c.Active ||
		c.UserID != SandboxUserID || r.CertUUID != c.UUID || !cert.NotAfter.After(s.now().AddDate(1, 0, 0)) {
		t.Fatalf("issued %+v (%v)", c, err)
	}
	if _, err := s.Activate(ctx, sandboxPrincipal, b.ExternalID); KindOf(err) != KindWorkflow {
		t.Fatalf("second activation: %v", err)
	}
	if _, err := s.Activate(ctx, Principal{OrgID: "other", UserID: "x"}, b.ExternalID); KindOf(err) != KindDataNotFound {
		t.Fatalf("another organisation's activation: %v", err)
	}

	prod, _, _ := newCertService(t, ContourProduction)
	if _, err := prod.Create(ctx, sandboxPrincipal, b, false); err != nil {
		t.Fatal(err)
	}
	if _, err := prod.Activate(ctx, sandboxPrincipal, b.ExternalID); KindOf(err) != KindWorkflow {
		t.Fatalf("production activation: %v", err)
	}
	noCA, _, _ := newCertService(t, ContourSandbox)
	noCA.CA = nil
	_, _ = noCA.Create(ctx, sandboxPrincipal, b, false)
	if _, err := noCA.Activate(ctx, sandboxPrincipal, b.ExternalID); KindOf(err) != KindUnavailable {
		t.Fatalf("activation without a CA: %v", err)
	}
	// A request wrapped in CMS SignedData, as OpenSSL writes one.
	p7, err := os.ReadFile(filepath.Join("..", "gost", "testdata", "openssl-256-cpA.csr.p7s"))
	if err != nil {
		t.Fatal(err)
	}
	wrapped := b
	wrapped.ExternalID = "0a000000-0000-4000-8000-000000000002"
	wrapped.PKCS10 = &PKCS10{BicryptID: "A00TEST", CMS: base64.StdEncoding.EncodeToString(p7)}
	if _, err := s.Create(ctx, sandboxPrincipal, wrapped, false); err != nil {
		t.Fatalf("a request in CMS: %v", err)
	}
	var e *Error
	wrapped.ExternalID, wrapped.PKCS10.CMS = "0a000000-0000-4000-8000-000000000003", "bm90IGEgcmVxdWVzdA=="
	if _, err := s.Create(ctx, sandboxPrincipal, wrapped, false); !errors.As(err, &e) || e.Kind != KindValidation || e.FieldNames[0] != "pkcs10.cms" {
		t.Fatalf("not a request: %v", err)
	}
}

// TestCertRequestEIOActivationMarksExecutive: activating a request sent to
// /cert-requests/eio makes its login's user the organisation's executive
// (user-info's individualExecutiveAgency), and activating an ordinary one
// leaves its owner as it was, in the fake store as in the SQL ones; no
// request is executive before its activation.
func TestCertRequestEIOActivationMarksExecutive(t *testing.T) {
	for _, eio := range []bool{true, false} {
		ctx := context.Background()
		s, store, _ := newCertService(t, ContourTest)
		b := certBody(goldenCSR(t))
		if eio {
			b.Login = SandboxUserLogin
		}
		if _, err := s.Create(ctx, sandboxPrincipal, b, eio); err != nil {
			t.Fatal(err)
		}
		if store.executives[SandboxUserID] {
			t.Fatalf("EIO %v: executive before activation", eio)
		}
		if _, err := s.Activate(ctx, sandboxPrincipal, b.ExternalID); err != nil {
			t.Fatal(err)
		}
		if got := store.executives[SandboxUserID]; got != eio {
			t.Errorf("EIO %v: owner executive after activation %v, want %v", eio, got, eio)
		}
	}
}

// TestCertRequestCMSContentType: pkcs10.cms in a CMS SignedData is taken
// when the request is encapsulated as id-data (openssl cms -sign -nodetach)
// and refused on pkcs10.cms when it is encapsulated under another content
// type (here a timestamp token's), a SignedData made for another purpose,
// its signature valid.
func TestCertRequestCMSContentType(t *testing.T) {
	ctx := context.Background()
	key, err := gost.GenerateKey(gost.TC26256A, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	cert, err := gost.SelfSignedCertificate(key, "signer", now.Add(-time.Hour), now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	for i, tc := range []struct {
		name string
		oid  asn1.ObjectIdentifier
		ok   bool
	}{
		{"id-data", asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 1}, true},
		{"id-ct-TSTInfo", asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 16, 1, 4}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _, _ := newCertService(t, ContourSandbox)
			p7, err := gost.SignDetachedWithOptions(goldenCSR(t), cert, key, gost.SignOptions{Attached: true, ContentType: tc.oid})
			if err != nil {
				t.Fatal(err)
			}
			b := certBody(p7)
			b.ExternalID = fmt.Sprintf("0a000000-0000-4000-8000-%012d", 10+i)
			_, err = s.Create(ctx, sandboxPrincipal, b, false)
			var e *Error
			switch {
			case tc.ok && err != nil:
				t.Fatal(err)
			case !tc.ok && (!errors.As(err, &e) || e.Kind != KindValidation || e.FieldNames[0] != "pkcs10.cms"):
				t.Fatalf("%v, want VALIDATION_FAULT on pkcs10.cms", err)
			}
		})
	}
}
