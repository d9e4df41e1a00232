package bankingsql

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"partnerapi/internal/banking"
)

// PartnerWebhooks lists every partner's setting for the key rotation.
func (s *PaymentStore) PartnerWebhooks(ctx context.Context) ([]banking.PartnerWebhook, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT client_id, url, secret, format, updated_at FROM banking_partner_webhooks ORDER BY client_id`)
	if err != nil {
		return nil, fmt.Errorf("partner webhooks: %w", err)
	}
	defer rows.Close()
	var out []banking.PartnerWebhook
	for rows.Next() {
		var w banking.PartnerWebhook
		var at int64
		if err := rows.Scan(&w.ClientID, &w.URL, &w.SealedSecret, &w.Format, &at); err != nil {
			return nil, err
		}
		w.UpdatedAt = time.UnixMicro(at).UTC()
		out = append(out, w)
	}
	return out, rows.Err()
}

// ReplaceWebhookSecret swaps the sealed secret only if it is still old, so
// a partner's new secret set during the rotation is never overwritten by
// the re-sealed old one. updated_at stays: the partner changed nothing.
func (s *PaymentStore) ReplaceWebhookSecret(ctx context.Context, clientID, old, new string) (bool, error) {
	var n int64
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE banking_partner_webhooks SET secret = $1 WHERE client_id = $2 AND secret = $3`, new, clientID, old)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return false, fmt.Errorf("replace webhook secret: %w", err)
	}
	return n == 1, nil
}
