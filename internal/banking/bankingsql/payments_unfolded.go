package bankingsql

import (
	"context"
	"fmt"

	"partnerapi/internal/sqldb"
)

// UnfoldedKey names a document whose key migration 0013 left in the
// partner's case, because its folded form would have made it one with
// another document of its organisation.
type UnfoldedKey struct {
	OrgID, ExternalID string
}

// UnfoldedPaymentKeys lists the documents migration 0013 could not fold
// and that still have their unfolded key, by organisation and key. Such a
// document is found by its exact text only, and another case of its UUID
// finds the other document or none, so serve reports them for the operator
// to settle with the partner; a key the operator has since changed by hand
// is no longer listed.
func UnfoldedPaymentKeys(ctx context.Context, db *sqldb.DB) ([]UnfoldedKey, error) {
	rows, err := db.R.QueryContext(ctx, `SELECT u.org_id, u.external_id FROM banking_payment_unfolded_keys u
		JOIN banking_payments p ON p.org_id = u.org_id AND p.external_id = u.external_id
		ORDER BY u.org_id, u.external_id`)
	if err != nil {
		return nil, fmt.Errorf("unfolded payment keys: %w", err)
	}
	defer rows.Close()
	var out []UnfoldedKey
	for rows.Next() {
		var k UnfoldedKey
		if err := rows.Scan(&k.OrgID, &k.ExternalID); err != nil {
			return nil, fmt.Errorf("unfolded payment keys: %w", err)
		}
		out = append(out, k)
	}
	return out, rows.Err()
}
