package banking

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"partnerapi/internal/gost"
)

// Certificate requests (reference §10 [C]): a partner sends a user's PKCS#10
// request for a new signing key, prints the paper form the user signs at
// the bank, and activates the request, after which the bank's certificate
// for the key is one of the user's /v1/crypto certificates.
//
// The provider publishes no state names for requests; the SDKs read only
// bankStatus, bankComment and channelInfo of a state. Ours:
//
//	create ─> CREATED ─print─> PRINTED ─activate─> ACTIVATED
//	          CREATED ─activate─> ACTIVATED  (sandbox and test contours: no paper to wait for)
//
// Printing again, in any state, prints the same form and changes nothing
// else; activating an ACTIVATED request is a WORKFLOW_FAULT. Each state
// keeps when it was reached (CreatedAt, PrintedAt, ActivatedAt).
const (
	CertRequestCreated   = "CREATED"
	CertRequestPrinted   = "PRINTED"
	CertRequestActivated = "ACTIVATED"
)

// IssuedCertType and IssuedCertRole are what a certificate issued for a
// request counts as: a key the user holds on a token (userCryptoType
// TOKEN, reference §3), signing alone. The request names no role, and a
// request is made for the person who signs for the organisation (userName
// and userPosition, an EIO request for its sole executive body), so the
// certificate signs as sole authority and its signatures carry no signType.
const (
	IssuedCertType = "TOKEN"
	IssuedCertRole = RoleSoleAuthority
)

// IssuedCertValidity is how long a certificate issued for a request is
// valid: the 15 months of the bank's signing certificates.
const IssuedCertValidity = 15 * 30 * 24 * time.Hour

// CertRequest is a stored certificate request of an organisation.
type CertRequest struct {
	OrgID      string
	ExternalID string // lower case
	UserID     string // who sent it (the token's user)
	OwnerID    string // whose key it certifies: the sender, or for EIO the user of Login
	EIO        bool   // sent to /cert-requests/eio
	Login      string // EIO only

	Number       string
	UserName     string
	OrgName      string
	Email        string
	UserPosition string
	BicryptID    string
	CMS          string // pkcs10.cms as sent, echoed back
	CSR          []byte // the PKCS#10 request's DER

	Status      string
	CertUUID    string // the issued certificate, once ACTIVATED
	CreatedAt   time.Time
	PrintedAt   time.Time // zero until printed
	ActivatedAt time.Time // zero until activated
}

// CertRequestStore keeps certificate requests. Every method is one
// transaction.
type CertRequestStore interface {
	// CreateCertRequest stores a new request; ErrDuplicate when the
	// organisation has one with its externalId.
	CreateCertRequest(ctx context.Context, r CertRequest) error
	// GetCertRequest is the organisation's request; ErrNotFound when absent.
	GetCertRequest(ctx context.Context, orgID, externalID string) (CertRequest, error)
	// MarkCertRequestPrinted moves a CREATED request to PRINTED at at and
	// leaves one in another state as it is; it returns the request.
	MarkCertRequestPrinted(ctx context.Context, orgID, externalID string, at time.Time) (CertRequest, error)
	// ActivateCertRequest moves a CREATED or PRINTED request to ACTIVATED
	// at at and stores cert as its owner's certificate, and for an EIO
	// request marks its owner as the organisation's executive, all or
	// nothing; ErrNotFound when absent, ErrDuplicate when it is already
	// ACTIVATED.
	ActivateCertRequest(ctx context.Context, orgID, externalID string, at time.Time, cert Certificate) (CertRequest, error)
}

// CertRequestBody is the JSON of POST /v1/crypto/cert-requests(/eio), and
// what the create answers (the SDKs' CertRequest and CertRequestEIO, with
// bankStatus and bankComment). The Java SDK's Jackson fails on unknown
// properties, so no field of ours is added to it.
type CertRequestBody struct {
	ExternalID   string  `json:"externalId"`
	Number       string  `json:"number"`
	UserName     string  `json:"userName"`
	OrgName      string  `json:"orgName,omitempty"`
	Email        string  `json:"email"`
	UserPosition string  `json:"userPosition"`
	Login        string  `json:"login,omitempty"`
	PKCS10       *PKCS10 `json:"pkcs10"`
	BankStatus   string  `json:"bankStatus,omitempty"`
	BankComment  string  `json:"bankComment,omitempty"`
}

// PKCS10 is the request's key: its Bicrypt id and the request itself.
type PKCS10 struct {
	BicryptID string `json:"bicryptId"`
	CMS       string `json:"cms"`
}

// CertRequestState is GET .../state (the SDKs' AcceptanceAdvance): only
// its three fields, for the same reason, so the times of the states and
// the issued certificate's uuid are told in bankComment.
type CertRequestState struct {
	BankComment string `json:"bankComment"`
	BankStatus  string `json:"bankStatus"`
	ChannelInfo string `json:"channelInfo"`
}

// The SDKs' email pattern (both carry the same one).
var certEmailRe = regexp.MustCompile(`^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}$`)

// certFieldMax bounds the free-text fields, the provider's usual 254.
const certFieldMax = 254

// CertRequests is the certificate-request service.
type CertRequests struct {
	Store CertRequestStore
	// Directory finds an EIO request's user by login and the
	// organisation the printed form names.
	Directory interface {
		GetUserByLogin(ctx context.Context, login string) (User, error)
		GetOrg(ctx context.Context, id string) (Organisation, error)
	}
	// CA issues the certificates of activated requests (the bank's key);
	// nil: activation is unavailable.
	CA      *BankKey
	Contour string
	Now     func() time.Time
	// Gate is the maintenance switch and rate limit of the request
	// operations, the API's one Gate (nil: off).
	Gate *Gate
}

func (s *CertRequests) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

// validate checks a body's fields by format, all failures in one
// VALIDATION_FAULT (reference §13), and parses the request it carries.
func (b *CertRequestBody) validate(eio bool) (*gost.CertificateRequest, error) {
	var fields, checks []string
	bad := func(f, c string) { fields, checks = append(fields, f), append(checks, c) }
	text := func(name, v string, required bool) {
		switch {
		case required && strings.TrimSpace(v) == "":
			bad(name, "required")
		case utf8.RuneCountInString(v) > certFieldMax:
			bad(name, fmt.Sprintf("length <= %d", certFieldMax))
		}
	}
	if b.ExternalID == "" {
		bad("externalId", "required")
	} else if !IsUUID(b.ExternalID) {
		bad("externalId", "uuid")
	}
	text("number", b.Number, true)
	text("userName", b.UserName, true)
	text("userPosition", b.UserPosition, true)
	text("orgName", b.OrgName, false)
	if b.Email == "" {
		bad("email", "required")
	} else if !certEmailRe.MatchString(b.Email) || len(b.Email) > certFieldMax {
		bad("email", "pattern ^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+.[A-Za-z]{2,}$")
	}
	if eio {
		text("login", b.Login, true)
	}
	var csr *gost.CertificateRequest
	if b.PKCS10 == nil {
		bad("pkcs10", "required")
	} else {
		text("pkcs10.bicryptId", b.PKCS10.BicryptID, true)
		if strings.TrimSpace(b.PKCS10.CMS) == "" {
			bad("pkcs10.cms", "required")
		} else if r, err := gost.ParseCertificateRequest([]byte(b.PKCS10.CMS)); errors.Is(err, gost.ErrTooManySigners) {
			// Refused before any signature in it is checked, each of
			// which would cost a GOST verification (gost.MaxSigners).
			bad("pkcs10.cms", fmt.Sprintf("CMS SignedData of at most %d SignerInfos", gost.MaxSigners))
		} else if errors.Is(err, gost.ErrTooManyCertificates) {
			bad("pkcs10.cms", fmt.Sprintf("CMS SignedData of at most %d certificates", gost.MaxCertificates))
		} else if err != nil {
			bad("pkcs10.cms", "PKCS#10 GOST R 34.10-2012 request, base64, PEM or in CMS SignedData")
		} else {
			csr = r
			if r.BicryptID != "" && b.PKCS10.BicryptID != "" && r.BicryptID != b.PKCS10.BicryptID {
				bad("pkcs10.bicryptId", "equals the request's Bicrypt identifier")
			}
		}
	}
	if fields != nil {
		return nil, &Error{Kind: KindValidation, Message: "Объект CertRequest не соответствует модели", FieldNames: fields, Checks: checks}
	}
	if err := csr.CheckSignature(); err != nil {
		return nil, Errorf(KindSignCheck, "Подпись запроса на сертификат не прошла проверку: запрос подписан не ключом, который он содержит")
	}
	return csr, nil
}

// Create validates and stores a request of p's organisation: the body's
// fields, the PKCS#10 request and its own signature (proof that the sender
// holds the key), for EIO the login of a user of the organisation, and a
// new externalId for the organisation.
func (s *CertRequests) Create(ctx context.Context, p Principal, b CertRequestBody, eio bool) (CertRequestBody, error) {
	csr, err := b.validate(eio)
	if err != nil {
		return CertRequestBody{}, err
	}
	owner := p.UserID
	if eio {
		u, err := s.Directory.GetUserByLogin(ctx, b.Login)
		if errors.Is(err, ErrNotFound) || (err == nil && u.OrgID != p.OrgID) {
			return CertRequestBody{}, Errorf(KindWorkflow, "Пользователь с логином %s не найден в организации", b.Login)
		}
		if err != nil {
			return CertRequestBody{}, err
		}
		owner = u.ID
	}
	r := CertRequest{OrgID: p.OrgID, ExternalID: strings.ToLower(b.ExternalID), UserID: p.UserID, OwnerID: owner, EIO: eio,
		Number: b.Number, UserName: b.UserName, OrgName: b.OrgName, Email: b.Email, UserPosition: b.UserPosition,
		BicryptID: b.PKCS10.BicryptID, CMS: b.PKCS10.CMS, CSR: csr.Raw, Status: CertRequestCreated, CreatedAt: s.now()}
	if eio {
		r.Login = b.Login
	}
	if err := s.Store.CreateCertRequest(ctx, r); errors.Is(err, ErrDuplicate) {
		return CertRequestBody{}, Errorf(KindWorkflow, "Запрос на сертификат с externalId %s уже существует", b.ExternalID)
	} else if err != nil {
		return CertRequestBody{}, err
	}
	return r.Body(), nil
}

// Body is the request as the create answers it.
func (r CertRequest) Body() CertRequestBody {
	return CertRequestBody{ExternalID: r.ExternalID, Number: r.Number, UserName: r.UserName, OrgName: r.OrgName,
		Email: r.Email, UserPosition: r.UserPosition, Login: r.Login, PKCS10: &PKCS10{BicryptID: r.BicryptID, CMS: r.CMS},
		BankStatus: r.Status, BankComment: r.comment()}
}

// State is the request's state as GET .../state answers it.
func (r CertRequest) State() CertRequestState {
	return CertRequestState{BankStatus: r.Status, BankComment: r.comment(), ChannelInfo: "API"}
}

// comment tells the state's history: when each state was reached and,
// once activated, the uuid of the certificate in /v1/crypto.
func (r CertRequest) comment() string {
	const layout = "2006-01-02T15:04:05Z"
	c := "Запрос создан " + r.CreatedAt.UTC().Format(layout)
	if !r.PrintedAt.IsZero() {
		c += "; бланк сформирован " + r.PrintedAt.UTC().Format(layout)
	}
	if !r.ActivatedAt.IsZero() {
		c += "; сертификат " + r.CertUUID + " выпущен и активирован " + r.ActivatedAt.UTC().Format(layout)
	}
	return c
}

// Get is the request of p's organisation; another organisation's is as
// absent as an unknown one (404 DATA_NOT_FOUND_EXCEPTION).
func (s *CertRequests) Get(ctx context.Context, p Principal, externalID string) (CertRequest, error) {
	if !IsUUID(externalID) {
		return CertRequest{}, &Error{Kind: KindValidation, Message: "externalId должен быть UUID", FieldNames: []string{"externalId"}, Checks: []string{"uuid"}}
	}
	r, err := s.Store.GetCertRequest(ctx, p.OrgID, strings.ToLower(externalID))
	if errors.Is(err, ErrNotFound) {
		return CertRequest{}, notFoundCertRequest(externalID)
	}
	return r, err
}

func notFoundCertRequest(externalID string) error {
	return Errorf(KindDataNotFound, "Запрос на сертификат с внешним идентификатором %s не найден", externalID)
}

// Print records that the request's paper form was made (CREATED → PRINTED)
// and returns the request for the form.
func (s *CertRequests) Print(ctx context.Context, p Principal, externalID string) (CertRequest, error) {
	if _, err := s.Get(ctx, p, externalID); err != nil {
		return CertRequest{}, err
	}
	r, err := s.Store.MarkCertRequestPrinted(ctx, p.OrgID, strings.ToLower(externalID), s.now())
	if errors.Is(err, ErrNotFound) {
		return CertRequest{}, notFoundCertRequest(externalID)
	}
	return r, err
}

// PrintForm is Print answered as the paper form (certreq_form.go).
func (s *CertRequests) PrintForm(ctx context.Context, p Principal, externalID string) ([]byte, error) {
	r, err := s.Print(ctx, p, externalID)
	if err != nil {
		return nil, err
	}
	org, err := s.Directory.GetOrg(ctx, p.OrgID)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	return CertRequestFormPDF(r, org), nil
}

// Activate issues the certificate of a request, signed by the bank's key as
// the test CA, and stores it as the owner's active certificate. Only the
// sandbox and test contours issue on the API's word: in production the
// bank activates a request once the user has brought the signed form.
func (s *CertRequests) Activate(ctx context.Context, p Principal, externalID string) (CertRequest, error) {
	if s.Contour == ContourProduction {
		if _, err := s.Get(ctx, p, externalID); err != nil {
			return CertRequest{}, err
		}
		return CertRequest{}, Errorf(KindWorkflow, "Сертификат активирует банк после предъявления подписанного бланка запроса %s", externalID)
	}
	return s.activate(ctx, p, externalID)
}

// ActivateAtBank is the bank's own activation of orgID's request, in every
// contour: the step that follows the user bringing the signed form to the
// bank in production, where the API refuses to activate (`partnerapi
// banking cert-request activate`, run by the bank's staff).
func (s *CertRequests) ActivateAtBank(ctx context.Context, orgID, externalID string) (CertRequest, error) {
	return s.activate(ctx, Principal{OrgID: orgID}, externalID)
}

// activate issues and stores the certificate of p's organisation's request.
func (s *CertRequests) activate(ctx context.Context, p Principal, externalID string) (CertRequest, error) {
	r, err := s.Get(ctx, p, externalID)
	if err != nil {
		return CertRequest{}, err
	}
	if r.Status == CertRequestActivated {
		return CertRequest{}, Errorf(KindWorkflow, "Запрос на сертификат %s уже активирован", externalID)
	}
	if s.CA == nil {
		return CertRequest{}, Errorf(KindUnavailable, "Удостоверяющий центр недоступен")
	}
	csr, err := gost.ParseCertificateRequest(r.CSR)
	if err != nil {
		return CertRequest{}, fmt.Errorf("stored request %s: %w", r.ExternalID, err)
	}
	now := s.now()
	cert, err := gost.IssueCertificate(csr, s.CA.Cert, s.CA.Key, now.Add(-time.Minute), now.Add(IssuedCertValidity))
	if err != nil {
		return CertRequest{}, fmt.Errorf("issue certificate for %s: %w", r.ExternalID, err)
	}
	c := Certificate{UUID: NewUUID(), UserID: r.OwnerID, OrgID: r.OrgID, DER: cert.Raw, Issuer: cert.Issuer, Serial: cert.SerialHex,
		TypeName: IssuedCertType, Role: IssuedCertRole, Active: true}
	out, err := s.Store.ActivateCertRequest(ctx, r.OrgID, r.ExternalID, now, c)
	switch {
	case errors.Is(err, ErrNotFound):
		return CertRequest{}, notFoundCertRequest(externalID)
	case errors.Is(err, ErrDuplicate):
		return CertRequest{}, Errorf(KindWorkflow, "Запрос на сертификат %s уже активирован", externalID)
	}
	return out, err
}
