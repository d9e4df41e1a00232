package bankingsql

import (
	"context"
	"fmt"

	"partnerapi/internal/banking"
)

var _ banking.PaymentNumberReserver = (*PaymentStore)(nil)

// ReserveNumbers adds n to the organisation's payment-number counter
// (migration 0009) and returns its new value; an organisation without a
// counter row starts at 0. It is one autocommitted statement outside the
// group commit, in the background: only creates without a number need it,
// once per block of numbers (the service sizes the blocks), and the row's
// update is atomic on both engines, so processes sharing the database get
// disjoint blocks.
func (s *PaymentStore) ReserveNumbers(ctx context.Context, orgID string, n int64) (int64, error) {
	var last int64
	err := s.db.W.QueryRowContext(ctx, `INSERT INTO banking_payment_numbers (org_id, reserved) VALUES ($1, $2)
		ON CONFLICT (org_id) DO UPDATE SET reserved = banking_payment_numbers.reserved + excluded.reserved
		RETURNING reserved`, orgID, n).Scan(&last)
	if err != nil {
		return 0, fmt.Errorf("reserve payment numbers: %w", err)
	}
	return last, nil
}
