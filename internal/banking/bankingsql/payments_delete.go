package bankingsql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"partnerapi/internal/banking"
)

// readBackMove reads back, in tx, the document a move conditional on its
// status aimed at, after the UPDATE that answered res: an unknown document
// is not found, one the condition no longer held for (the update changed
// no row) is refused by refuse with the status it is in, and the moved one
// is returned with its key for its history row.
func readBackMove(ctx context.Context, tx *sql.Tx, res sql.Result, orgID, externalID, folded, sent string, refuse func(externalID, status string) error) (*banking.StoredPayment, string, error) {
	n, err := res.RowsAffected()
	if err != nil {
		return nil, "", err
	}
	var key string
	row := tx.QueryRowContext(ctx, `SELECT external_id, `+paymentCols+` FROM banking_payments WHERE org_id = $1 AND `+keyMatch(1, 2, folded, sent), orgID, folded, sent)
	sp, err := scanPayment(keyedRow{row, &key})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, "", notFound(externalID)
	}
	if err != nil {
		return nil, "", err
	}
	if n == 0 {
		return nil, "", refuse(externalID, sp.Status)
	}
	return sp, key, nil
}

// deletableIn is the condition that a row's status is still one a draft is
// deleted from (banking.DeletableStatuses), with its parameters from $first
// on, and those parameters.
func deletableIn(first int) (string, []any) {
	marks := make([]string, len(banking.DeletableStatuses))
	args := make([]any, len(banking.DeletableStatuses))
	for i, st := range banking.DeletableStatuses {
		marks[i], args[i] = "$"+strconv.Itoa(first+i), st
	}
	return "status IN (" + strings.Join(marks, ", ") + ")", args
}

// DeletePayment moves a draft to DELETED (banking.PaymentStore). Like
// advance, the move is an update conditional on the status, now on its
// being any deletable one: whichever of a deletion and a signing of the
// same draft updates the row first wins, and the other's condition no
// longer holds (PostgreSQL re-checks it on the row the winner committed,
// SQLite runs one writer at a time), so a draft never ends both signed and
// deleted. The history row and the final status's outbox row are written
// by recordHistory in the same transaction, exactly as a signing's are, so
// the webhook, its dedup by externalId and eventTime, its retries and the
// delivery log treat DELETED like every other final status.
func (s *PaymentStore) DeletePayment(ctx context.Context, orgID, externalID, comment string, at time.Time) (*banking.StoredPayment, error) {
	folded, sent := keyArgs(externalID)
	cond, statuses := deletableIn(7)
	var sp *banking.StoredPayment
	var key string
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE banking_payments SET status = $1, comment = $2, updated_at = $3
			WHERE org_id = $4 AND `+keyMatch(4, 5, folded, sent)+` AND `+cond,
			append([]any{banking.StatusDeleted, comment, micros(at), orgID, folded, sent}, statuses...)...)
		if err != nil {
			return err
		}
		// A document that exists but is no draft any more, or never was:
		// the status read back is the one that refused the deletion.
		if sp, key, err = readBackMove(ctx, tx, res, orgID, externalID, folded, sent, banking.NotDeletable); err != nil {
			return err
		}
		history := []banking.StatusChange{{Status: banking.StatusDeleted, Comment: comment, At: at}}
		return recordHistory(ctx, tx, orgID, key, sp.Doc.ExternalID, banking.PartnerOfChannel(sp.Channel), history, s.queuedAt())
	})
	if err != nil {
		if banking.KindOf(err) != banking.KindInternal {
			return nil, err
		}
		return nil, fmt.Errorf("delete payment: %w", err)
	}
	return sp, nil
}
