package banking

import (
	"context"
	"partnerapi/internal/jsonmsg"
	"slices"
	"strings"
	"time"
)

// EditableStatuses are the statuses of a document a bank user may edit in
// the bank's UI through our stand-in (reference §6, CHECKERROR ─edit─>
// CREATED): only one that failed its checks. A CREATED draft is not among
// them although the bank's UI edits drafts too: a signer may be signing it
// at that moment, its signatures checked against the digest read before the
// store's move, which is conditional on the status alone, so an edit landing
// in between would leave a document signed over content it no longer has.
// A CHECKERROR document cannot be signed, so nothing signs it while it is
// edited.
var EditableStatuses = []string{StatusCheckError}

// Editable reports whether a document in status may be edited.
func Editable(status string) bool { return slices.Contains(EditableStatuses, status) }

// NotEditable is the refusal to edit a document in status, a WORKFLOW_FAULT
// like NotDeletable's, in the same words whether the status was read before
// the edit or a concurrent deletion moved the document on while it ran.
func NotEditable(externalID, status string) error {
	return Errorf(KindWorkflow, "Документ %s в статусе %s нельзя изменить: изменить можно только документ в статусе %s",
		externalID, status, strings.Join(EditableStatuses, ", "))
}

// PaymentEdit is what a bank user's edit writes over a stored document
// (PaymentStore.EditPayment): the corrected document, its JSON
// (MarshalPayment), its amount in kopecks, and the status it lands in with
// the bank's comment, at At.
type PaymentEdit struct {
	Doc     []byte
	Kopecks int64
	Status  string
	Comment string
	At      time.Time
}

// KindScope is the scope a document of kind k is created with (reference
// §2), the one an edit of it takes too.
func KindScope(k DocKind) string {
	switch k {
	case KindInvoice:
		return ScopePayDocRUInvoice
	case KindInvoiceAny:
		return ScopePayDocRUInvoiceAny
	case KindInvoiceBudget:
		return ScopePayDocRUInvoiceBudget
	}
	return ScopePayDocRU
}

// EditDraft is a bank user correcting a document that failed its checks in
// the bank's UI (reference §6, CHECKERROR ─edit─> CREATED), for the CLI
// (`partnerapi banking payment edit`) in any contour: without it a partner's
// document in CHECKERROR could only be deleted. d is the corrected content
// in the shape of the document's create, its kind unchanged. It is judged
// exactly as a create of that kind (verdict) at at: a document that still
// fails its departmentalInfo or logical controls stays CHECKERROR with the
// new comment, one that passes becomes CREATED without one, its digest now
// that of the new content; a format failure or a foreign account is refused
// and nothing is written.
func (s *PaymentService) EditDraft(ctx context.Context, orgID, externalID string, d Payment, at time.Time) (*StoredPayment, error) {
	sp, err := s.Store.GetPayment(ctx, orgID, externalID)
	if err != nil {
		return nil, err
	}
	return s.editDraft(ctx, Principal{OrgID: orgID}, sp, externalID, d, at.UTC())
}

// EditDraftInSandbox is EditDraft for the sandbox's HTTP route, so a
// partner's CI can get a CHECKERROR document signed without the CLI. It
// acts on the caller's organisation only (another organisation's document
// is not found, as a GET of it is), takes the scope the document's kind is
// created with, edits at the service's clock, and answers the document as
// GET …/{externalId} does.
func (s *PaymentService) EditDraftInSandbox(ctx context.Context, p Principal, externalID string, d Payment) (*Payment, error) {
	if err := s.SandboxOnly(); err != nil {
		return nil, err
	}
	sp, err := s.Store.GetPayment(ctx, p.OrgID, externalID)
	if err != nil {
		return nil, err
	}
	if scope := KindScope(sp.Kind); !p.HasAny(scope) {
		return nil, Errorf(KindForbidden, "Недостаточно прав доступа: нужен scope %s", scope)
	}
	if sp, err = s.editDraft(ctx, p, sp, externalID, d, s.now()); err != nil {
		return nil, err
	}
	return s.view(sp), nil
}

// editDraft edits the stored sp, read for externalID, with d at now. The
// status is checked before the content, so a document that may not be
// edited is refused whatever was sent; the store's move is conditional on
// the status all the same, since a deletion may move it on in between.
func (s *PaymentService) editDraft(ctx context.Context, p Principal, sp *StoredPayment, externalID string, d Payment, now time.Time) (*StoredPayment, error) {
	if !Editable(sp.Status) {
		return nil, NotEditable(externalID, sp.Status)
	}
	if d.ExternalID != "" && !strings.EqualFold(d.ExternalID, externalID) {
		// A UUID's hex digits are case-insensitive, as the store's keys are.
		return nil, &Error{Kind: KindValidation, Message: "externalId документа не совпадает с externalId в пути запроса",
			FieldNames: []string{"externalId"}, Checks: []string{"равен externalId в пути запроса " + jsonmsg.Echo(externalID)}}
	}
	if len(d.DigestSignatures) > 0 {
		// The signatures of an edited document are over its new digest,
		// which the partner reads only once the edit is stored.
		return nil, &Error{Kind: KindValidation, Message: "Правка документа передаётся без подписей: подпишите исправленный документ (/sign)",
			FieldNames: []string{"digestSignatures"}, Checks: []string{"поле не заполняется при правке"}}
	}
	// The document keeps the partner's externalId text and the number the
	// bank gave it (or the partner sent) when the correction names none:
	// an edit uses up no number.
	d.ExternalID = sp.Doc.ExternalID
	if sp.Kind == KindPayDoc && d.Number == "" {
		d.Number = sp.Doc.Number
	}
	if sp.Kind != KindPayDoc && d.PaymentNumber == "" {
		d.PaymentNumber = sp.Doc.PaymentNumber
	}
	if sp.Kind != KindPayDoc {
		dropDraftPayer(&d)
	}
	d.BankStatus, d.BankComment, d.CrucialFieldsHash, d.SigningURL = "", "", "", ""
	comment, err := s.verdict(ctx, p, sp.Kind, &d, now)
	if err != nil {
		return nil, err
	}
	if sp.Kind == KindInvoice {
		if err := setOwnPayee(ctx, s.Payees, p, &d); err != nil {
			return nil, err
		}
	}
	edit := PaymentEdit{Status: StatusCreated, Comment: comment, At: now}
	if comment != "" {
		edit.Status = StatusCheckError
	}
	if edit.Doc, err = MarshalPayment(&d); err != nil {
		return nil, err
	}
	edit.Kopecks, _ = d.Amount.Kopecks()
	return s.Store.EditPayment(ctx, p.OrgID, externalID, sp.Status, edit)
}
