package bankingsql

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
)

// CardStore is banking.CardStore on SQLite or PostgreSQL.
type CardStore struct{ db *sqldb.DB }

// NewCardStore wraps db (already migrated with MigrateCards).
func NewCardStore(db *sqldb.DB) *CardStore { return &CardStore{db: db} }

var (
	_ banking.CardStore      = (*CardStore)(nil)
	_ banking.OrgOfferReader = (*CardStore)(nil)
)

const cardCols = `org_id, card_id, account_number, bic, pan, holder_name, holder_birthday, expiry_date, status, embossed_text, card_type`

func scanCard(sc interface{ Scan(...any) error }) (banking.Card, error) {
	var c banking.Card
	var st string
	err := sc.Scan(&c.OrgID, &c.ID, &c.AccountNumber, &c.BIC, &c.PAN, &c.HolderName, &c.HolderBirthday, &c.ExpiryDate, &st, &c.EmbossedText, &c.CardType)
	c.Status = banking.CardStatus(st)
	return c, err
}

func (s *CardStore) InsertCard(ctx context.Context, c banking.Card) error {
	_, err := s.db.W.ExecContext(ctx, `INSERT INTO banking_cards (`+cardCols+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11)`,
		c.OrgID, c.ID, c.AccountNumber, c.BIC, c.PAN, c.HolderName, c.HolderBirthday, c.ExpiryDate, string(c.Status), c.EmbossedText, c.CardType)
	if sqldb.IsUniqueViolation(err) {
		return banking.Errorf(banking.KindWorkflow, "Карта %s уже существует", c.ID)
	}
	if err != nil {
		return fmt.Errorf("insert card: %w", err)
	}
	return nil
}

func (s *CardStore) Card(ctx context.Context, orgID, id string) (banking.Card, error) {
	c, err := scanCard(s.db.R.QueryRowContext(ctx, `SELECT `+cardCols+` FROM banking_cards WHERE org_id = $1 AND card_id = $2`, orgID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return c, banking.Errorf(banking.KindCardNotFound, "Карта %s не найдена", id)
	}
	if err != nil {
		return c, fmt.Errorf("card: %w", err)
	}
	return c, nil
}

func (s *CardStore) ListCards(ctx context.Context, f banking.CardFilter) ([]banking.Card, error) {
	if len(f.Accounts) == 0 {
		return nil, nil
	}
	args := []any{f.OrgID}
	in := func(vals []string) string {
		ph := make([]string, len(vals))
		for i, v := range vals {
			args = append(args, v)
			ph[i] = fmt.Sprintf("$%d", len(args))
		}
		return strings.Join(ph, ",")
	}
	q := `SELECT ` + cardCols + ` FROM banking_cards WHERE org_id = $1 AND account_number IN (` + in(f.Accounts) + `)`
	if len(f.Statuses) > 0 {
		st := make([]string, len(f.Statuses))
		for i, v := range f.Statuses {
			st[i] = string(v)
		}
		q += ` AND status IN (` + in(st) + `)`
	}
	args = append(args, f.Limit, f.Offset)
	q += fmt.Sprintf(` ORDER BY card_id LIMIT $%d OFFSET $%d`, len(args)-1, len(args))
	rows, err := s.db.R.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list cards: %w", err)
	}
	defer rows.Close()
	var out []banking.Card
	for rows.Next() {
		c, err := scanCard(rows)
		if err != nil {
			return nil, fmt.Errorf("list cards: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

func (s *CardStore) SetCardStatus(ctx context.Context, orgID, id string, st banking.CardStatus) error {
	res, err := s.db.W.ExecContext(ctx, `UPDATE banking_cards SET status = $3 WHERE org_id = $1 AND card_id = $2`, orgID, id, string(st))
	if err != nil {
		return fmt.Errorf("set card status: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return banking.Errorf(banking.KindCardNotFound, "Карта %s не найдена", id)
	}
	return nil
}

func (s *CardStore) CardAccounts(ctx context.Context, orgID string) ([]string, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT DISTINCT account_number FROM banking_cards WHERE org_id = $1 ORDER BY account_number`, orgID)
	if err != nil {
		return nil, fmt.Errorf("card accounts: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var a string
		if err := rows.Scan(&a); err != nil {
			return nil, fmt.Errorf("card accounts: %w", err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

func (s *CardStore) AddOfferAccount(ctx context.Context, partnerID, orgID, account string) error {
	_, err := s.db.W.ExecContext(ctx, `INSERT INTO banking_card_offer_accounts (partner_id, org_id, account_number) VALUES ($1,$2,$3)
		ON CONFLICT DO NOTHING`, partnerID, orgID, account)
	if err != nil {
		return fmt.Errorf("add offer account: %w", err)
	}
	return nil
}

func (s *CardStore) InOffer(ctx context.Context, partnerID, orgID, account string) (bool, error) {
	var one int
	err := s.db.R.QueryRowContext(ctx, `SELECT 1 FROM banking_card_offer_accounts WHERE partner_id = $1 AND org_id = $2 AND account_number = $3`,
		partnerID, orgID, account).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("offer: %w", err)
	}
	return true, nil
}

// AnyOffer reports whether the partner signed the offer on any of the
// organisation's accounts (banking.OrgOfferReader), whether or not they
// hold cards.
func (s *CardStore) AnyOffer(ctx context.Context, partnerID, orgID string) (bool, error) {
	var one int
	err := s.db.R.QueryRowContext(ctx, `SELECT 1 FROM banking_card_offer_accounts WHERE partner_id = $1 AND org_id = $2 LIMIT 1`,
		partnerID, orgID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("offer: %w", err)
	}
	return true, nil
}

func unixOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromUnix(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

func (s *CardStore) CreateLimit(ctx context.Context, l banking.LimitChange) (string, error) {
	sigs, err := json.Marshal(l.DigestSignatures)
	if err != nil {
		return "", err
	}
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		// An application without a number gets the organisation's next
		// one (migration 0003). The counter row is raised first and rolled
		// back with a refused insert; on PostgreSQL its lock orders the
		// organisation's concurrent applications, which are few.
		if l.Number == "" {
			var n int64
			if err := tx.QueryRowContext(ctx, `INSERT INTO banking_card_limit_numbers (org_id, issued) VALUES ($1, 1)
				ON CONFLICT (org_id) DO UPDATE SET issued = banking_card_limit_numbers.issued + 1
				RETURNING issued`, l.OrgID).Scan(&n); err != nil {
				return err
			}
			l.Number = strconv.FormatInt(n, 10)
		}
		// The card's status is re-checked in the same statement, so a card
		// blocked between the service's check and this insert gets no limit.
		// The key is the externalId in lower case, as Limit looks it up: a UUID
		// is one application whatever the case the partner wrote it in, while
		// the service keeps the partner's text for the digest and the answer.
		res, err := tx.ExecContext(ctx, `INSERT INTO banking_card_limits (org_id, external_id, partner_id, card_id, code, amount, doc_date,
			doc_number, signatures, bank_status, bank_comment, channel_info, created_at, expires_at, roles, exported_at)
			SELECT $1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$17,$18
			WHERE EXISTS (SELECT 1 FROM banking_cards WHERE org_id = $1 AND card_id = $4 AND status IN ($15, $16))`,
			l.OrgID, strings.ToLower(l.ExternalID), l.PartnerID, l.BusinessCardID, l.Code, string(l.Limit), l.Date, l.Number, string(sigs),
			l.BankStatus, string(l.BankComment), l.ChannelInfo, unixOrZero(l.CreatedAt), unixOrZero(l.ExpiresAt),
			string(banking.CardActive), string(banking.CardNotDelivered), joinRoles(l.Roles), unixOrZero(l.ExportedAt))
		if sqldb.IsUniqueViolation(err) {
			return banking.Errorf(banking.KindWorkflow, "Заявка с externalId %s уже существует", l.ExternalID)
		}
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return banking.Errorf(banking.KindWorkflow, "Карте %s нельзя установить лимит в её текущем статусе", l.BusinessCardID)
		}
		return nil
	})
	if err != nil {
		if banking.KindOf(err) != banking.KindInternal {
			return "", err
		}
		return "", fmt.Errorf("create limit: %w", err)
	}
	return l.Number, nil
}

var _ banking.LimitSettingReader = (*CardStore)(nil)

// CardLimitsOff reports whether the organisation's setting for card limits
// through the API is off (banking.LimitSettingReader).
func (s *CardStore) CardLimitsOff(ctx context.Context, orgID string) (bool, error) {
	var one int
	err := s.db.R.QueryRowContext(ctx, `SELECT 1 FROM banking_card_limits_off WHERE org_id = $1`, orgID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("card limit setting: %w", err)
	}
	return true, nil
}

// SetCardLimitsOff turns the organisation's setting for card limits
// through the API off (off true) or on; either is idempotent.
func (s *CardStore) SetCardLimitsOff(ctx context.Context, orgID string, off bool) error {
	q := `DELETE FROM banking_card_limits_off WHERE org_id = $1`
	if off {
		q = `INSERT INTO banking_card_limits_off (org_id) VALUES ($1) ON CONFLICT (org_id) DO NOTHING`
	}
	if _, err := s.db.W.ExecContext(ctx, q, orgID); err != nil {
		return fmt.Errorf("set card limit setting: %w", err)
	}
	return nil
}

const limitCols = `org_id, external_id, partner_id, card_id, code, amount, doc_date, doc_number, signatures, bank_status, bank_comment, channel_info, created_at, expires_at, roles, exported_at`

func scanLimit(sc interface{ Scan(...any) error }) (banking.LimitChange, error) {
	var l banking.LimitChange
	var amount, sigs, roles string
	var created, expires, exported int64
	err := sc.Scan(&l.OrgID, &l.ExternalID, &l.PartnerID, &l.BusinessCardID, &l.Code, &amount, &l.Date, &l.Number, &sigs,
		&l.BankStatus, (*string)(&l.BankComment), &l.ChannelInfo, &created, &expires, &roles, &exported)
	if err != nil {
		return l, err
	}
	l.Limit, l.Roles = json.Number(amount), splitRoles(roles)
	l.CreatedAt, l.ExpiresAt, l.ExportedAt = fromUnix(created), fromUnix(expires), fromUnix(exported)
	if err := json.Unmarshal([]byte(sigs), &l.DigestSignatures); err != nil {
		return l, fmt.Errorf("limit signatures: %w", err)
	}
	return l, nil
}

func (s *CardStore) Limit(ctx context.Context, orgID, externalID string) (banking.LimitChange, error) {
	l, err := scanLimit(s.db.R.QueryRowContext(ctx, `SELECT `+limitCols+` FROM banking_card_limits WHERE org_id = $1 AND external_id = $2`,
		orgID, strings.ToLower(externalID)))
	if errors.Is(err, sql.ErrNoRows) {
		return l, banking.Errorf(banking.KindDataNotFound, "Заявка %s не найдена", externalID)
	}
	if err != nil {
		return l, fmt.Errorf("limit: %w", err)
	}
	return l, nil
}

func (s *CardStore) CardLimits(ctx context.Context, orgID, cardID string) ([]banking.LimitChange, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT `+limitCols+` FROM banking_card_limits
		WHERE org_id = $1 AND card_id = $2 AND bank_status = $3 ORDER BY exported_at DESC, seq DESC`, orgID, cardID, banking.LimitExported)
	if err != nil {
		return nil, fmt.Errorf("card limits: %w", err)
	}
	defer rows.Close()
	var out []banking.LimitChange
	for rows.Next() {
		l, err := scanLimit(rows)
		if err != nil {
			return nil, fmt.Errorf("card limits: %w", err)
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// ClockOffset is the sandbox clock's offset for orgID: the shared one plus
// the organisation's own ("" : the shared one alone).
func (s *CardStore) ClockOffset(ctx context.Context, orgID string) (time.Duration, error) {
	var n int64
	err := s.db.R.QueryRowContext(ctx, `SELECT COALESCE((SELECT offset_ns FROM banking_card_clock WHERE id = 1), 0)
		+ COALESCE((SELECT offset_ns FROM banking_card_org_clock WHERE org_id = $1), 0)`, orgID).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("clock: %w", err)
	}
	return time.Duration(n), nil
}

// AddOrgClockOffset adds d to orgID's own offset in one statement so
// concurrent advances add up.
func (s *CardStore) AddOrgClockOffset(ctx context.Context, orgID string, d time.Duration) error {
	_, err := s.db.W.ExecContext(ctx, `INSERT INTO banking_card_org_clock (org_id, offset_ns) VALUES ($1, $2)
		ON CONFLICT (org_id) DO UPDATE SET offset_ns = banking_card_org_clock.offset_ns + excluded.offset_ns`, orgID, int64(d))
	if err != nil {
		return fmt.Errorf("set clock: %w", err)
	}
	return nil
}

// AddClockOffset adds d in one statement so concurrent advances add up.
func (s *CardStore) AddClockOffset(ctx context.Context, d time.Duration) error {
	_, err := s.db.W.ExecContext(ctx, `INSERT INTO banking_card_clock (id, offset_ns) VALUES (1, $1)
		ON CONFLICT (id) DO UPDATE SET offset_ns = banking_card_clock.offset_ns + excluded.offset_ns`, int64(d))
	if err != nil {
		return fmt.Errorf("set clock: %w", err)
	}
	return nil
}
