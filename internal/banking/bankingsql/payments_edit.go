package bankingsql

import (
	"context"
	"database/sql"
	"fmt"

	"partnerapi/internal/banking"
)

// EditPayment replaces the content of a document still in status from
// (banking.PaymentStore): a bank user's edit of a document that failed its
// checks. Like DeletePayment it is one update conditional on the status,
// now on its being the one the edit read: whichever of an edit and a
// deletion of the same document updates the row first wins, and once the
// document is DELETED the edit's condition no longer holds, so a deleted
// document never comes back edited. The signature roles are cleared, for
// any signatures sent with the document's create were over its old digest.
// The history row is written by recordHistory in the same transaction; a
// CREATED or CHECKERROR move is not final, so it queues no webhook.
//
// No crucialFieldsHash of the document was remembered (settledFields keeps
// none of a document that may still be edited), so none is stale now.
func (s *PaymentStore) EditPayment(ctx context.Context, orgID, externalID, from string, edit banking.PaymentEdit) (*banking.StoredPayment, error) {
	folded, sent := keyArgs(externalID)
	var sp *banking.StoredPayment
	var key string
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE banking_payments SET doc = $1, kopecks = $2, status = $3, comment = $4, roles = '', updated_at = $5
			WHERE org_id = $6 AND `+keyMatch(6, 7, folded, sent)+` AND status = $9`,
			string(edit.Doc), edit.Kopecks, edit.Status, edit.Comment, micros(edit.At), orgID, folded, sent, from)
		if err != nil {
			return err
		}
		// A document no longer in the status the edit read is refused with
		// the status it is in now.
		if sp, key, err = readBackMove(ctx, tx, res, orgID, externalID, folded, sent, banking.NotEditable); err != nil {
			return err
		}
		history := []banking.StatusChange{{Status: edit.Status, Comment: edit.Comment, At: edit.At}}
		return recordHistory(ctx, tx, orgID, key, sp.Doc.ExternalID, banking.PartnerOfChannel(sp.Channel), history, s.queuedAt())
	})
	if err != nil {
		if banking.KindOf(err) != banking.KindInternal {
			return nil, err
		}
		return nil, fmt.Errorf("edit payment: %w", err)
	}
	return sp, nil
}
