package bankingsql

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"partnerapi/internal/banking"
)

// SignLimit moves an application from the status and roles the caller read
// (fromStatus, fromRoles) to l's status, roles, signatures, expiry and
// time in force (banking.CardStore). The stored status and roles are
// compared and set in one statement, so of two signers racing on the same
// application only the first applies; the other's statement matches no row.
// An application coming into force (EXPORTED) also needs its card to take a
// limit still, re-checked in that statement as CreateLimit does.
func (s *CardStore) SignLimit(ctx context.Context, l banking.LimitChange, fromStatus string, fromRoles []banking.SignatureRole) error {
	sigs, err := json.Marshal(l.DigestSignatures)
	if err != nil {
		return err
	}
	q := `UPDATE banking_card_limits SET bank_status = $1, roles = $2, signatures = $3, expires_at = $4, exported_at = $5
		WHERE org_id = $6 AND external_id = $7 AND bank_status = $8 AND roles = $9`
	args := []any{l.BankStatus, joinRoles(l.Roles), string(sigs), unixOrZero(l.ExpiresAt), unixOrZero(l.ExportedAt),
		l.OrgID, strings.ToLower(l.ExternalID), fromStatus, joinRoles(fromRoles)}
	if l.BankStatus == banking.LimitExported {
		q += ` AND EXISTS (SELECT 1 FROM banking_cards WHERE org_id = $6 AND card_id = banking_card_limits.card_id AND status IN ($10, $11))`
		args = append(args, string(banking.CardActive), string(banking.CardNotDelivered))
	}
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("sign limit: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("sign limit: %w", err)
		} else if n == 1 {
			return nil
		}
		// No row moved: say which condition failed, read in the same
		// transaction.
		var status, roles string
		err = tx.QueryRowContext(ctx, `SELECT bank_status, roles FROM banking_card_limits WHERE org_id = $1 AND external_id = $2`,
			l.OrgID, strings.ToLower(l.ExternalID)).Scan(&status, &roles)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return banking.Errorf(banking.KindDataNotFound, "Заявка %s не найдена", l.ExternalID)
		case err != nil:
			return fmt.Errorf("sign limit: %w", err)
		case status != fromStatus || roles != joinRoles(fromRoles):
			return banking.Errorf(banking.KindWorkflow, "Заявка %s уже подписана другим запросом (статус %s), повторите запрос", l.ExternalID, status)
		}
		return banking.Errorf(banking.KindWorkflow, "Карте %s нельзя установить лимит в её текущем статусе", l.BusinessCardID)
	})
}
