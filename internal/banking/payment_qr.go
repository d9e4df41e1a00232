package banking

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"

	"partnerapi/internal/gost"
)

// Sandbox QR-confirmation magic ids (reference §7).
const (
	QRSandboxOK          = "739b63f1-a5b2-4150-a152-e22eb39a3386"
	QRSandboxNotOTP      = "175529cd-26bc-4988-b14b-4aa1b7d81b92"
	QRSandboxWrongPrefix = "998be1fd-4e89-4a3"
)

// qrNotOTP is the refusal of a QR confirmation to a user whose signing
// tool type is not OneTimePassword (§4.2, §7).
const qrNotOTP = "Подтверждение по QR-коду доступно только пользователям с типом средства подписи OneTimePassword"

// MaxQRDocs is how many documents one QR confirms (§4.2).
const MaxQRDocs = 5

// QRConfirmation is the answer of the QR operation: the code the signer
// scans in the mobile app and the documents it confirms.
type QRConfirmation struct {
	QRCode         string   `json:"qrCode"`
	ExternalDocIDs []string `json:"externalDocIds"`
}

// QRConfirm builds a QR confirmation for up to five of the principal's
// documents awaiting signature. In the sandbox the magic ids behave as §7
// says and any user may confirm; in the test and production contours the
// magic ids are ordinary ids and only a user whose signing tool type is
// OneTimePassword may confirm (§4.2), as the provider's bank checks.
func (s *PaymentService) QRConfirm(ctx context.Context, p Principal, ids []string) (*QRConfirmation, error) {
	if len(ids) == 0 || len(ids) > MaxQRDocs {
		return nil, &Error{Kind: KindValidation, Message: "Объект не соответствует модели",
			FieldNames: []string{"externalDocIds"}, Checks: []string{"от 1 до 5 идентификаторов"}}
	}
	for i, id := range ids {
		if !gost.IsCanonicalUUID(id) {
			return nil, &Error{Kind: KindValidation, Message: "Объект не соответствует модели",
				FieldNames: []string{"externalDocIds[" + itoa(i) + "]"}, Checks: []string{"идентификатор должен быть UUID"}}
		}
	}
	sandbox := s.Config.Contour == "" || s.Config.Contour == ContourSandbox
	if !sandbox {
		if err := s.checkQRSigner(ctx, p); err != nil {
			return nil, err
		}
	}
	for _, id := range ids {
		if sandbox {
			switch {
			case strings.EqualFold(id, QRSandboxOK):
				continue
			case strings.EqualFold(id, QRSandboxNotOTP):
				return nil, Errorf(KindWorkflow, qrNotOTP)
			case strings.HasPrefix(strings.ToLower(id), QRSandboxWrongPrefix):
				return nil, Errorf(KindWorkflow, "Невозможно сформировать QR-код для платежного документа с внешним идентификатором %s: неверный статус документа", id)
			}
		}
		sp, err := s.Store.GetPayment(ctx, p.OrgID, id)
		if KindOf(err) == KindDataNotFound {
			return nil, Errorf(KindDataNotFound, "Невозможно сформировать QR-код по несуществующему платежному документу с внешним идентификатором %s.", id)
		}
		if err != nil {
			return nil, err
		}
		if !Signable(sp.Status) {
			return nil, Errorf(KindWorkflow, "Невозможно сформировать QR-код для платежного документа с внешним идентификатором %s: неверный статус документа %s", id, sp.Status)
		}
		if s.expired(&sp.Doc) {
			return nil, Errorf(KindWorkflow, "Невозможно сформировать QR-код для платежного документа с внешним идентификатором %s: срок его подтверждения (expirationDate) истёк %s", id, sp.Doc.ExpirationDate)
		}
		if s.lapsed(&sp.Doc) {
			return nil, Errorf(KindWorkflow, "Невозможно сформировать QR-код для платежного документа с внешним идентификатором %s: срок действия документа (date %s, 10 дней) истёк", id, sp.Doc.Date)
		}
		// A QR confirmation is a signature by other means: a document
		// whose payer account was blocked or closed since it was made is
		// refused here as at /sign.
		if err := s.signablePayer(ctx, p, &sp.Doc); err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Kind != KindWorkflow {
				return nil, err
			}
			return nil, Errorf(KindWorkflow, "Невозможно сформировать QR-код для платежного документа с внешним идентификатором %s: %s", id, e.Message)
		}
	}
	// The code names the documents and the organisation; the mobile app
	// resolves it. Deterministic so a retried request shows the same code.
	h := sha256.Sum256([]byte(p.OrgID + "|" + strings.Join(ids, ",")))
	return &QRConfirmation{QRCode: "sbbol-qr:" + hex.EncodeToString(h[:16]), ExternalDocIDs: ids}, nil
}

// checkQRSigner refuses a QR confirmation to a principal whose user does not
// sign with one-time passwords. A token without a user, a user the bank no
// longer knows and a service without a user lookup are refused alike: the
// check must not pass for want of an answer.
func (s *PaymentService) checkQRSigner(ctx context.Context, p Principal) error {
	if s.Users == nil || p.UserID == "" {
		return Errorf(KindWorkflow, qrNotOTP)
	}
	u, err := s.Users.GetUser(ctx, p.UserID)
	if errors.Is(err, ErrNotFound) {
		return Errorf(KindWorkflow, qrNotOTP)
	}
	if err != nil {
		return err
	}
	if u.SigningMethodOf() != SigningOneTimePassword {
		return Errorf(KindWorkflow, qrNotOTP)
	}
	return nil
}
