package banking

import (
	"context"
	"strconv"
	"time"
	"unicode/utf8"
)

// MaxDeleteComment bounds the comment of a bank user's deletion, in
// characters. The contract has no length for bankComment, so the purpose's
// 210 (reference §5.6) is taken: the comment lands in the same answers and
// webhooks a partner already sizes for the purpose.
const MaxDeleteComment = 210

// DeleteDraft is a bank user deleting a draft in the bank's UI (reference
// §6, CREATED ─delete─> DELETED). The API has no such operation, so the
// bank's side runs it (`partnerapi banking payment delete`): without it no
// document could ever reach DELETED, and a partner testing its webhook
// consumer against the sandbox, where signed documents end IMPLEMENTED at
// once, would have no failure status to receive. comment, when not empty,
// is the document's bankComment from then on; its bound holds for the CLI
// and the sandbox route alike, since both write the same answers.
//
// The status is read first so that a document that was never deletable is
// refused before any transaction; the store's move is conditional on the
// status all the same, since a signer may move the draft on in between.
func DeleteDraft(ctx context.Context, store PaymentStore, orgID, externalID, comment string, at time.Time) (*StoredPayment, error) {
	if utf8.RuneCountInString(comment) > MaxDeleteComment {
		return nil, &Error{Kind: KindValidation, Message: "Комментарий длиннее " + strconv.Itoa(MaxDeleteComment) + " символов",
			FieldNames: []string{"comment"}, Checks: []string{"длина должна быть от 0 до " + strconv.Itoa(MaxDeleteComment) + " символов"}}
	}
	sp, err := store.GetPayment(ctx, orgID, externalID)
	if err != nil {
		return nil, err
	}
	if !Deletable(sp.Status) {
		return nil, NotDeletable(externalID, sp.Status)
	}
	return store.DeletePayment(ctx, orgID, externalID, comment, at.UTC())
}

// SandboxOnly refuses an operation that stands in for the bank's own side
// outside the sandbox: in test and production only the bank's users act
// there, and a partner must not be able to end its documents itself.
func (s *PaymentService) SandboxOnly() error {
	if c := s.Config.Contour; c != "" && c != ContourSandbox {
		return Errorf(KindForbidden, "Операция доступна только в песочнице (контур %s)", c)
	}
	return nil
}

// DeleteDraftInSandbox is DeleteDraft for the sandbox's HTTP route, which
// lets a partner's CI reach DELETED and its webhook without the CLI. It
// acts on the caller's organisation only (another organisation's document
// is not found, as a GET of it is), deletes at the service's clock so the
// eventTime agrees with the rest of the document's history, and answers the
// document's state as GET …/state would.
func (s *PaymentService) DeleteDraftInSandbox(ctx context.Context, p Principal, externalID, comment string) (State, error) {
	if err := s.SandboxOnly(); err != nil {
		return State{}, err
	}
	if _, err := DeleteDraft(ctx, s.Store, p.OrgID, externalID, comment, s.now()); err != nil {
		return State{}, err
	}
	return s.State(ctx, p, externalID)
}
