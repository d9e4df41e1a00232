package banking

import (
	"context"
	"time"
)

// DeleteDraft is a bank user deleting a draft in the bank's UI (reference
// §6, CREATED ─delete─> DELETED). The API has no such operation, so the
// bank's side runs it (`partnerapi banking payment delete`): without it no
// document could ever reach DELETED, and a partner testing its webhook
// consumer against the sandbox, where signed documents end IMPLEMENTED at
// once, would have no failure status to receive. comment, when not empty,
// is the document's bankComment from then on.
//
// The status is read first so that a document that was never deletable is
// refused before any transaction; the store's move is conditional on the
// status all the same, since a signer may move the draft on in between.
func DeleteDraft(ctx context.Context, store PaymentStore, orgID, externalID, comment string, at time.Time) (*StoredPayment, error) {
	sp, err := store.GetPayment(ctx, orgID, externalID)
	if err != nil {
		return nil, err
	}
	if !Deletable(sp.Status) {
		return nil, NotDeletable(externalID, sp.Status)
	}
	return store.DeletePayment(ctx, orgID, externalID, comment, at.UTC())
}
