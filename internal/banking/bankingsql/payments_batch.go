package bankingsql

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
)

// newPayment is one document waiting in the group commit, with everything
// that costs CPU (the JSON of the document, the roles, the shape of its
// history) done by its caller before it queues, so the single committer only
// runs SQL.
type newPayment struct {
	sp *banking.StoredPayment
	// key is the row's external_id, the document's externalId folded to
	// lower case (paymentKeyOf); the document itself keeps the partner's
	// text.
	key   string
	doc   string
	roles string
	// walkedAt is the time (µs) of a processing walk recorded in the
	// document's row (walked_at), nil without one; history holds the moves
	// written as history rows.
	walkedAt any
	// created and updated are the row's created_at and updated_at (µs),
	// boxed once: at creation both are nearly always the instant of the
	// walk too, and then the three columns share one boxed value instead
	// of allocating one each in the committer.
	created, updated any
	history          []banking.StatusChange
	// final lists the moves to final statuses, each queued as a webhook
	// for client, the partner whose channel created the document; none for
	// a walk kept as walked_at, whose webhook the row implies
	// (payments_walk_outbox.go).
	final  []banking.StatusChange
	client string
	// queued is the created_at (µs) of the rows queued for final, the
	// store's clock when the create was submitted; nil writes NULL, which
	// reads as each row's event_time.
	queued any
}

// newPaymentOf prepares sp and the moves of its creation for the committer.
// When the moves are exactly the processing path at one instant, the walk
// becomes the row's walked_at (migration 0006) instead of history rows.
func newPaymentOf(sp *banking.StoredPayment, doc string, history []banking.StatusChange) *newPayment {
	if at, ok := processedAtOnce(history); ok {
		return newWalkedPayment(sp, doc, at)
	}
	p := newRow(sp, doc)
	p.history = history
	for _, h := range history {
		if banking.IsFinal(h.Status) {
			p.final = append(p.final, h)
		}
	}
	return p
}

// newWalkedPayment prepares sp, whose whole processing walk happened at at,
// for the committer: the walk is the row's walked_at.
func newWalkedPayment(sp *banking.StoredPayment, doc string, at time.Time) *newPayment {
	p := newRow(sp, doc)
	p.walkedAt = p.created
	if !at.Equal(sp.CreatedAt) {
		p.walkedAt = micros(at)
	}
	return p
}

// newRow is the document row of sp, without history.
func newRow(sp *banking.StoredPayment, doc string) *newPayment {
	p := &newPayment{sp: sp, key: paymentKeyOf(sp.Doc.ExternalID), doc: doc, roles: joinRoles(sp.Roles), client: banking.PartnerOfChannel(sp.Channel)}
	p.created = any(micros(sp.CreatedAt))
	p.updated = p.created
	if !sp.UpdatedAt.Equal(sp.CreatedAt) {
		p.updated = micros(sp.UpdatedAt)
	}
	return p
}

// paymentKey is the document's unique key: two creates with one externalId
// in one organisation never share a batch, so the second one to commit
// meets the first one's row and fails alone.
func paymentKey(p *newPayment) string { return p.sp.OrgID + "\x00" + p.key }

// duplicatePayment is the answer for an externalId the organisation
// already used.
func duplicatePayment(externalID string) error {
	return banking.Errorf(banking.KindWorkflow, "Документ с externalId %s уже существует: externalId должен быть уникальным", externalID)
}

// writePayments is the group commit's batch writer: every document row in
// multi-row INSERTs that skip existing keys and return the keys they wrote,
// then the status history rows and webhook outbox rows of the documents that
// were written (neither for a document whose whole walk is its walked_at:
// its history is expanded from it, its webhook materialized from it by
// payments_walk_outbox.go). A document whose key already existed gets its
// own WORKFLOW_FAULT; the others commit. On SQLite that is a few prepared statements per batch
// (payments_stmts.go), on PostgreSQL one statement of arrays
// (payments_batch_pg.go), or one COPY for a batch of walked documents
// (payments_batch_copy.go), instead of several statements per document.
func writePayments(stmts *batchStatements) sqldb.WriteBatch[*newPayment] {
	if stmts.db.Dialect == sqldb.Postgres {
		return func(ctx context.Context, tx *sql.Tx, batch []*newPayment) ([]error, error) {
			return writePaymentBatchPostgres(ctx, tx, batch)
		}
	}
	return func(ctx context.Context, tx *sql.Tx, batch []*newPayment) ([]error, error) {
		return writePaymentBatch(ctx, tx, stmts, batch)
	}
}

const (
	paymentsHead = `INSERT INTO banking_payments (org_id, external_id, kind, doc, kopecks, status, comment, roles, channel, created_at, updated_at, walked_at) VALUES `
	paymentsSkip = ` ON CONFLICT (org_id, external_id) DO NOTHING`
	paymentsTail = paymentsSkip + ` RETURNING org_id, external_id`
	historyHead  = `INSERT INTO banking_payment_history (org_id, external_id, status, comment, at) VALUES `
	webhooksHead = `INSERT INTO banking_payment_webhooks (org_id, external_id, sent_external_id, status, comment, event_time, next_at, client_id, created_at) VALUES `
)

func writePaymentBatch(ctx context.Context, tx *sql.Tx, stmts *batchStatements, batch []*newPayment) ([]error, error) {
	written, err := insertPayments(ctx, tx, stmts, batch)
	if err != nil {
		return nil, fmt.Errorf("insert payments: %w", err)
	}
	hist := rowsInsert{stmts: stmts, shape: batchShape{head: historyHead, width: 5}}
	hooks := rowsInsert{stmts: stmts, shape: batchShape{head: webhooksHead, width: 9}}
	outcomes := make([]error, len(batch))
	for i, p := range batch {
		if written != nil && !written[paymentKey(p)] {
			outcomes[i] = duplicatePayment(p.sp.Doc.ExternalID)
			continue
		}
		for _, h := range p.history {
			hist.row(p.sp.OrgID, p.key, h.Status, h.Comment, micros(h.At))
		}
		for _, h := range p.final {
			at := micros(h.At)
			hooks.row(p.sp.OrgID, p.key, sentExternalID(p.key, p.sp.Doc.ExternalID), h.Status, h.Comment, at, at, p.client, p.queued)
		}
	}
	if err := hist.exec(ctx, tx); err != nil {
		return nil, fmt.Errorf("record status: %w", err)
	}
	if err := hooks.exec(ctx, tx); err != nil {
		return nil, fmt.Errorf("queue webhook: %w", err)
	}
	return outcomes, nil
}

// insertPayments inserts the batch's document rows; ON CONFLICT DO NOTHING
// leaves an existing document untouched. It returns nil when every row was
// written, else the keys that were. A batch nearly always writes all its
// rows, so they are first inserted without RETURNING (which makes SQLite
// collect the keys in a temporary table and database/sql scan each one)
// and the row count checked; only a batch that met an existing key is
// rolled back to its savepoint and inserted again with RETURNING, which
// names the rows really inserted.
func insertPayments(ctx context.Context, tx *sql.Tx, stmts *batchStatements, batch []*newPayment) (map[string]bool, error) {
	docs, returning := paymentRows(stmts, batch)
	// The savepoint's two statements run every batch, so they are
	// prepared like the inserts: unprepared, parsing and finalizing them
	// cost half a microsecond per document.
	if err := stmts.fixed("SAVEPOINT payments").exec(ctx, tx); err != nil {
		return nil, err
	}
	n, err := docs.execCount(ctx, tx)
	if err != nil {
		return nil, err
	}
	if n == int64(len(batch)) {
		return nil, stmts.fixed("RELEASE payments").exec(ctx, tx)
	}
	if _, err := tx.ExecContext(ctx, "ROLLBACK TO payments"); err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, "RELEASE payments"); err != nil {
		return nil, err
	}
	docs.shape.tail = returning
	written := make(map[string]bool, len(batch))
	err = docs.query(ctx, tx, func(rows *sql.Rows) error {
		var org, ext string
		if err := rows.Scan(&org, &ext); err != nil {
			return err
		}
		written[org+"\x00"+ext] = true
		return nil
	})
	return written, err
}

// processedAtOnce reports whether history is exactly the processing path,
// every step at one time and without a comment, and returns that time.
func processedAtOnce(history []banking.StatusChange) (time.Time, bool) {
	if len(history) != len(banking.ProcessingPath) {
		return time.Time{}, false
	}
	at := history[0].At
	for i, h := range history {
		if h.Status != banking.ProcessingPath[i] || h.Comment != "" || !h.At.Equal(at) {
			return time.Time{}, false
		}
	}
	return at, true
}

// rowsInsert collects the rows of one table's multi-row INSERT and runs
// them in the statements batchStatements sizes. shared, when set, are the
// values bound ahead of the rows in each of those statements (the shared
// columns of payments_batch_shared.go).
type rowsInsert struct {
	stmts  *batchStatements
	shape  batchShape
	shared []any
	args   []any
}

func (r *rowsInsert) row(vals ...any) { r.args = append(r.args, vals...) }

// exec runs the collected rows.
func (r *rowsInsert) exec(ctx context.Context, tx *sql.Tx) error {
	_, err := r.execCount(ctx, tx)
	return err
}

// execCount runs the collected rows and returns how many rows they wrote.
func (r *rowsInsert) execCount(ctx context.Context, tx *sql.Tx) (int64, error) {
	var total int64
	err := r.each(ctx, func(st *batchStatement, args []any) error {
		var res sql.Result
		var err error
		if st.prepared != nil {
			res, err = tx.StmtContext(ctx, st.prepared).ExecContext(ctx, args...)
		} else {
			res, err = tx.ExecContext(ctx, st.text, args...)
		}
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		total += n
		return err
	})
	return total, err
}

// query runs the collected rows and hands every row they return to scan.
func (r *rowsInsert) query(ctx context.Context, tx *sql.Tx, scan func(*sql.Rows) error) error {
	return r.each(ctx, func(st *batchStatement, args []any) error {
		var rows *sql.Rows
		var err error
		if st.prepared != nil {
			rows, err = tx.StmtContext(ctx, st.prepared).QueryContext(ctx, args...)
		} else {
			rows, err = tx.QueryContext(ctx, st.text, args...)
		}
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			if err := scan(rows); err != nil {
				return err
			}
		}
		return rows.Err()
	})
}

func (r *rowsInsert) each(ctx context.Context, run func(*batchStatement, []any) error) error {
	args := r.args
	var withShared []any
	for n := len(args) / r.shape.width; n > 0; {
		size := rowsPerStatement(n)
		stmtArgs := args[:size*r.shape.width]
		if len(r.shared) > 0 {
			withShared = append(append(withShared[:0], r.shared...), stmtArgs...)
			stmtArgs = withShared
		}
		if err := run(r.stmts.get(r.shape, size), stmtArgs); err != nil {
			return err
		}
		args, n = args[size*r.shape.width:], n-size
	}
	return nil
}
