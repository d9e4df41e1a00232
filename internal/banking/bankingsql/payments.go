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
	"unsafe"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
)

// PaymentStore is banking.PaymentStore on SQLite or PostgreSQL.
type PaymentStore struct {
	db *sqldb.DB
	// creates group-commits concurrent CreatePayment calls (payments_batch.go).
	creates *sqldb.GroupCommit[*newPayment]
	// hashes caches each document's crucialFieldsHash (payments_state.go).
	hashes *crucialHashes
	// batches are the group commit's statements (payments_stmts.go).
	batches *batchStatements
	// now is the clock of the outbox rows' created_at, when each was
	// queued (WithClock); nil is the wall clock.
	now func() time.Time
}

// NewPaymentStore wraps db (already migrated with MigratePayments).
func NewPaymentStore(db *sqldb.DB) *PaymentStore {
	batches := &batchStatements{db: db}
	creates := sqldb.NewGroupCommit(db, 0, paymentKey, writePayments(batches))
	if db.Dialect == sqldb.Postgres {
		// The batch is one statement: no BEGIN and COMMIT round trips.
		creates.WithSingleStatement(writePaymentBatchPool)
	}
	return &PaymentStore{db: db, creates: creates, hashes: &crucialHashes{}, batches: batches}
}

var (
	_ banking.PaymentStore     = (*PaymentStore)(nil)
	_ banking.CreateExpecter   = (*PaymentStore)(nil)
	_ banking.ProcessedCreator = (*PaymentStore)(nil)
)

// WithCommitDelay sets how long the creates' group commit waits for create
// requests already under way before it begins a transaction (0: never; see
// sqldb.GroupCommit.WithCommitDelay). Call it before the first create.
func (s *PaymentStore) WithCommitDelay(d time.Duration) *PaymentStore {
	s.creates.WithCommitDelay(d)
	return s
}

// WithClock sets the clock that stamps each queued webhook with the time it
// was queued (its created_at, from which the dispatcher's MaxAge counts);
// the wall clock by default. Tests of the age limit set theirs.
func (s *PaymentStore) WithClock(now func() time.Time) *PaymentStore {
	s.now = now
	return s
}

// queuedAt is the created_at of an outbox row written now (µs).
func (s *PaymentStore) queuedAt() int64 {
	if s.now != nil {
		return micros(s.now())
	}
	return micros(time.Now())
}

// ExpectCreate announces a create request that will call CreatePayment with
// the returned context, so a delayed commit may wait for it; release must be
// called when the request ends.
func (s *PaymentStore) ExpectCreate(ctx context.Context) (context.Context, banking.Releaser) {
	return s.creates.Expect(ctx)
}

func joinRoles(rs []banking.SignatureRole) string {
	// A create's set is one signature, or none: its role is the column,
	// without the slice strings.Join needs (an allocation per create).
	switch len(rs) {
	case 0:
		return ""
	case 1:
		return string(rs[0])
	}
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = string(r)
	}
	return strings.Join(s, ",")
}

func splitRoles(s string) []banking.SignatureRole {
	if s == "" {
		return nil
	}
	var rs []banking.SignatureRole
	for _, r := range strings.Split(s, ",") {
		rs = append(rs, banking.SignatureRole(r))
	}
	return rs
}

func micros(t time.Time) int64 { return t.UnixMicro() }

// recordHistory writes the status moves of the document stored under key
// and, for a final status, queues its webhook for the document's partner
// with the externalId the partner sent (payments_webhook_sent.go), queued
// at queued (µs, its created_at) — inside the caller's transaction.
func recordHistory(ctx context.Context, tx *sql.Tx, orgID, key, externalID, clientID string, history []banking.StatusChange, queued int64) error {
	for _, h := range history {
		if _, err := tx.ExecContext(ctx, `INSERT INTO banking_payment_history (org_id, external_id, status, comment, at) VALUES ($1,$2,$3,$4,$5)`,
			orgID, key, h.Status, h.Comment, micros(h.At)); err != nil {
			return fmt.Errorf("record status: %w", err)
		}
		if banking.IsFinal(h.Status) {
			if _, err := tx.ExecContext(ctx, `INSERT INTO banking_payment_webhooks (org_id, external_id, sent_external_id, status, comment, event_time, next_at, client_id, created_at)
				VALUES ($1,$2,$3,$4,$5,$6,$6,$7,$8)`,
				orgID, key, sentExternalID(key, externalID), h.Status, h.Comment, micros(h.At), clientID, queued); err != nil {
				return fmt.Errorf("queue webhook: %w", err)
			}
		}
	}
	return nil
}

// CreatePayment queues the document into the group commit and returns once
// the transaction that wrote it (with its history and outbox rows) has
// committed, or with the document's own refusal.
func (s *PaymentStore) CreatePayment(ctx context.Context, sp *banking.StoredPayment, history []banking.StatusChange) error {
	doc, err := docString(sp)
	if err != nil {
		return err
	}
	p := newPaymentOf(sp, doc, history)
	if len(p.final) > 0 {
		p.queued = s.queuedAt()
	}
	return s.submit(ctx, sp, p)
}

// CreateProcessed is CreatePayment of a document whose history is the whole
// processing path at at (banking.ProcessedCreator): its walk goes straight
// to the row's walked_at, as CreatePayment would find it to.
func (s *PaymentStore) CreateProcessed(ctx context.Context, sp *banking.StoredPayment, at time.Time) error {
	doc, err := docString(sp)
	if err != nil {
		return err
	}
	return s.submit(ctx, sp, newWalkedPayment(sp, doc, at))
}

// docString is the document's stored JSON. Its bytes are handed to the
// committer as a string without a copy: DocJSON is not written while the
// create runs (banking.StoredPayment), and a copy was a kilobyte allocated
// and moved per create.
func docString(sp *banking.StoredPayment) (string, error) {
	doc := sp.DocJSON
	if doc == nil {
		var err error
		if doc, err = json.Marshal(sp.Doc); err != nil {
			return "", err
		}
	}
	return unsafe.String(unsafe.SliceData(doc), len(doc)), nil
}

// BorrowsPayment: the store holds a created document's StoredPayment and
// DocJSON only until its create returns nil (banking.PaymentBorrower). The
// committer answers a document after its batch committed, and by then the
// driver has copied what it bound (SQLite binds a copy of each text, pgx
// encodes its arguments and COPY rows into its own buffer); nothing keeps
// the newPayment, docString's string or the StoredPayment past the batch.
// A create that fails may still have them in a batch, and the service does
// not reuse those.
func (*PaymentStore) BorrowsPayment() {}

var _ banking.PaymentBorrower = (*PaymentStore)(nil)

// submit queues p into the group commit and returns once the transaction
// that wrote it has committed, or with the document's own refusal.
func (s *PaymentStore) submit(ctx context.Context, sp *banking.StoredPayment, p *newPayment) error {
	err := s.creates.Submit(ctx, p)
	if sqldb.IsUniqueViolation(err) {
		return duplicatePayment(sp.Doc.ExternalID)
	}
	if err != nil && banking.KindOf(err) == banking.KindInternal {
		return fmt.Errorf("create payment: %w", err)
	}
	return err
}

const paymentCols = `org_id, kind, doc, kopecks, status, comment, roles, channel, created_at, updated_at`

// keyedRow scans a row whose first column is external_id into key and
// hands the rest to scanPayment.
type keyedRow struct {
	row interface{ Scan(...any) error }
	key *string
}

func (k keyedRow) Scan(dest ...any) error { return k.row.Scan(append([]any{k.key}, dest...)...) }

func scanPayment(sc interface{ Scan(...any) error }) (*banking.StoredPayment, error) {
	var sp banking.StoredPayment
	var kind, doc, roles string
	var created, updated int64
	if err := sc.Scan(&sp.OrgID, &kind, &doc, &sp.Kopecks, &sp.Status, &sp.Comment, &roles, &sp.Channel, &created, &updated); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(doc), &sp.Doc); err != nil {
		return nil, fmt.Errorf("decode stored payment: %w", err)
	}
	sp.Kind, sp.Roles = banking.DocKind(kind), splitRoles(roles)
	sp.CreatedAt, sp.UpdatedAt = time.UnixMicro(created).UTC(), time.UnixMicro(updated).UTC()
	return &sp, nil
}

// paymentKeyOf is the key a document is stored under: its externalId in
// lower case, so one UUID written in two cases is one document (a UUID's hex
// digits are case-insensitive) while the stored document, its digest and
// every answer keep the partner's text. Migration 0013 folded the keys of
// the rows written before keys were folded, except those whose folded key
// another document of the organisation holds (UnfoldedPaymentKeys); lookups
// (keyMatch) find those by their exact text.
func paymentKeyOf(externalID string) string { return strings.ToLower(externalID) }

// keyMatch is the condition on external_id of a lookup by the partner's
// externalId: its parameters are the organisation ($org) and keyArgs's two
// values ($first, $first+1). A row keyed by the text exactly as sent wins —
// a row migration 0013 left unfolded, whose folded key may be another
// document's — else the folded key. So every lookup, update and history
// read names one document, never both of such a pair. A lookup in lower
// case (the folded key and the text are one) keeps the plain condition,
// which costs no more than one key did.
func keyMatch(org, first int, folded, sent string) string {
	f, s := "$"+strconv.Itoa(first), "$"+strconv.Itoa(first+1)
	if folded == sent {
		return "external_id IN (" + f + ", " + s + ")"
	}
	return "external_id = CASE WHEN EXISTS (SELECT 1 FROM banking_payments k WHERE k.org_id = $" + strconv.Itoa(org) +
		" AND k.external_id = " + s + ") THEN " + s + " ELSE " + f + " END"
}

// keyArgs are the parameters of keyMatch for externalID.
func keyArgs(externalID string) (folded, sent string) {
	return paymentKeyOf(externalID), externalID
}

func notFound(externalID string) error {
	return banking.Errorf(banking.KindDataNotFound, "Платежный документ с внешним идентификатором %s не найден", externalID)
}

func (s *PaymentStore) GetPayment(ctx context.Context, orgID, externalID string) (*banking.StoredPayment, error) {
	folded, sent := keyArgs(externalID)
	sp, err := scanPayment(s.db.QueryRowContext(ctx, `SELECT `+paymentCols+` FROM banking_payments WHERE org_id = $1 AND `+keyMatch(1, 2, folded, sent), orgID, folded, sent))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound(externalID)
	}
	if err != nil {
		return nil, fmt.Errorf("get payment: %w", err)
	}
	return sp, nil
}

func (s *PaymentStore) AdvancePayment(ctx context.Context, orgID, externalID, from string, roles []banking.SignatureRole, history []banking.StatusChange) (*banking.StoredPayment, error) {
	return s.advance(ctx, orgID, externalID, from, nil, roles, history)
}

// AdvancePaymentDoc is AdvancePayment that also replaces the stored
// document with doc (banking.DocAdvancer): a draft whose payer its signer
// completed. No crucialFieldsHash of the draft was remembered
// (settledFields), so none is stale now.
func (s *PaymentStore) AdvancePaymentDoc(ctx context.Context, orgID, externalID, from string, doc []byte, roles []banking.SignatureRole, history []banking.StatusChange) (*banking.StoredPayment, error) {
	d := string(doc)
	return s.advance(ctx, orgID, externalID, from, &d, roles, history)
}

// advance moves a document still in status from to the last entry of
// history, with its roles and, when doc is not nil, that document.
func (s *PaymentStore) advance(ctx context.Context, orgID, externalID, from string, doc *string, roles []banking.SignatureRole, history []banking.StatusChange) (*banking.StoredPayment, error) {
	last := history[len(history)-1]
	folded, sent := keyArgs(externalID)
	var sp *banking.StoredPayment
	var key string
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE banking_payments SET status = $1, comment = $2, roles = $3, updated_at = $4, doc = COALESCE($9, doc)
			WHERE org_id = $5 AND `+keyMatch(5, 6, folded, sent)+` AND status = $8`,
			last.Status, last.Comment, joinRoles(roles), micros(last.At), orgID, folded, sent, from, doc)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return banking.Errorf(banking.KindWorkflow, "Статус документа %s изменился, повторите запрос", externalID)
		}
		// The history and webhook rows take the row's own key, folded or
		// (a row migration 0013 left unfolded) as it was sent.
		row := tx.QueryRowContext(ctx, `SELECT external_id, `+paymentCols+` FROM banking_payments WHERE org_id = $1 AND `+keyMatch(1, 2, folded, sent), orgID, folded, sent)
		sp, err = scanPayment(keyedRow{row, &key})
		if err != nil {
			return err
		}
		return recordHistory(ctx, tx, orgID, key, sp.Doc.ExternalID, banking.PartnerOfChannel(sp.Channel), history, s.queuedAt())
	})
	if err != nil {
		if banking.KindOf(err) != banking.KindInternal {
			return nil, err
		}
		return nil, fmt.Errorf("advance payment: %w", err)
	}
	return sp, nil
}

// PaymentHistory returns the document's moves in order: the processing walk
// kept in its row's walked_at (migration 0006), expanded into one move per
// step of the path, then its history rows. The walk is only ever written when
// the document is created, so it precedes every history row.
func (s *PaymentStore) PaymentHistory(ctx context.Context, orgID, externalID string) ([]banking.StatusChange, error) {
	var out []banking.StatusChange
	var walked sql.NullInt64
	folded, sent := keyArgs(externalID)
	err := s.db.QueryRowContext(ctx, `SELECT walked_at FROM banking_payments WHERE org_id = $1 AND `+keyMatch(1, 2, folded, sent), orgID, folded, sent).Scan(&walked)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("payment history: %w", err)
	}
	if walked.Valid {
		at := time.UnixMicro(walked.Int64).UTC()
		for _, st := range banking.ProcessingPath {
			out = append(out, banking.StatusChange{Status: st, At: at})
		}
	}
	rows, err := s.db.QueryContext(ctx, `SELECT status, comment, at FROM banking_payment_history
		WHERE org_id = $1 AND `+keyMatch(1, 2, folded, sent)+` ORDER BY id`, orgID, folded, sent)
	if err != nil {
		return nil, fmt.Errorf("payment history: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var h banking.StatusChange
		var at int64
		if err := rows.Scan(&h.Status, &h.Comment, &at); err != nil {
			return nil, err
		}
		h.At = time.UnixMicro(at).UTC()
		out = append(out, h)
	}
	return out, rows.Err()
}
