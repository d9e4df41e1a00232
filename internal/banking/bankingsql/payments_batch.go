package bankingsql

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/sqldb"
)

// newPayment is one document waiting in the group commit, with everything
// that costs CPU (the JSON of the document, the roles) done by its caller
// before it queues, so the single committer only runs SQL.
type newPayment struct {
	sp      *banking.StoredPayment
	doc     string
	roles   string
	history []banking.StatusChange
}

// paymentKey is the document's unique key: two creates with one externalId
// in one organisation never share a batch, so the second one to commit
// meets the first one's row and fails alone.
func paymentKey(p *newPayment) string { return p.sp.OrgID + "\x00" + p.sp.Doc.ExternalID }

// duplicatePayment is the answer for an externalId the organisation
// already used.
func duplicatePayment(externalID string) error {
	return banking.Errorf(banking.KindWorkflow, "Документ с externalId %s уже существует: externalId должен быть уникальным", externalID)
}

// rowsPerStatement bounds the rows of one multi-row INSERT so its bind
// parameters stay far below both engines' limits whatever the batch holds.
const rowsPerStatement = 500

// writePayments is the group commit's batch writer: every document row in
// multi-row INSERTs that skip existing keys and return the keys they wrote,
// then the status history and webhook outbox rows of the documents that were
// written. A document whose key already existed gets its own WORKFLOW_FAULT;
// the others commit. Three statements per batch instead of several per
// document keep PostgreSQL's round trips and SQLite's parsing flat.
func writePayments(dialect sqldb.Dialect) sqldb.WriteBatch[*newPayment] {
	return func(ctx context.Context, tx *sql.Tx, batch []*newPayment) ([]error, error) {
		return writePaymentBatch(ctx, tx, dialect, batch)
	}
}

func writePaymentBatch(ctx context.Context, tx *sql.Tx, dialect sqldb.Dialect, batch []*newPayment) ([]error, error) {
	written := make(map[string]bool, len(batch))
	for lo := 0; lo < len(batch); lo += rowsPerStatement {
		chunk := batch[lo:min(lo+rowsPerStatement, len(batch))]
		if err := insertPaymentRows(ctx, tx, dialect, chunk, written); err != nil {
			return nil, err
		}
	}
	hist := rowsInsert{dialect: dialect, head: `INSERT INTO banking_payment_history (org_id, external_id, status, comment, at) VALUES `}
	walks := rowsInsert{dialect: dialect, head: processingHead}
	hooks := rowsInsert{dialect: dialect, head: `INSERT INTO banking_payment_webhooks (org_id, external_id, status, comment, event_time, next_at, client_id) VALUES `}
	outcomes := make([]error, len(batch))
	for i, p := range batch {
		if !written[paymentKey(p)] {
			outcomes[i] = duplicatePayment(p.sp.Doc.ExternalID)
			continue
		}
		history := p.history
		if at, ok := processedAtOnce(history); ok {
			// The whole walk in three bind parameters instead of five per
			// step: the statement crosses the document with the path.
			if err := walks.row(ctx, tx, processingTail, p.sp.OrgID, p.sp.Doc.ExternalID, strconv.FormatInt(micros(at), 10)); err != nil {
				return nil, fmt.Errorf("record status: %w", err)
			}
			history = nil
		}
		for _, h := range history {
			if err := hist.row(ctx, tx, "", p.sp.OrgID, p.sp.Doc.ExternalID, h.Status, h.Comment, micros(h.At)); err != nil {
				return nil, fmt.Errorf("record status: %w", err)
			}
		}
		for _, h := range p.history {
			if banking.IsFinal(h.Status) {
				at := micros(h.At)
				if err := hooks.row(ctx, tx, webhookConflict, p.sp.OrgID, p.sp.Doc.ExternalID, h.Status, h.Comment, at, at, banking.PartnerOfChannel(p.sp.Channel)); err != nil {
					return nil, fmt.Errorf("queue webhook: %w", err)
				}
			}
		}
	}
	if err := walks.flush(ctx, tx, processingTail); err != nil {
		return nil, fmt.Errorf("record status: %w", err)
	}
	if err := hist.flush(ctx, tx, ""); err != nil {
		return nil, fmt.Errorf("record status: %w", err)
	}
	if err := hooks.flush(ctx, tx, webhookConflict); err != nil {
		return nil, fmt.Errorf("queue webhook: %w", err)
	}
	return outcomes, nil
}

const webhookConflict = ` ON CONFLICT (org_id, external_id, event_time) DO NOTHING`

// processingHead and processingTail enclose the (org_id, external_id, at)
// rows of documents that ran the whole processing path at one instant (the
// sandbox's fully signed creates): each is crossed with the path's steps, so
// every move is still its own history row with its time, in the path's order
// within the document (the ORDER BY; history is read back by id). The time
// is bound as decimal text and cast: PostgreSQL types the bound values of a
// VALUES list as text, and both engines cast such text to an integer exactly.
const processingHead = `INSERT INTO banking_payment_history (org_id, external_id, status, comment, at)
	SELECT d.column1, d.column2, p.column2, '', CAST(d.column3 AS BIGINT) FROM (VALUES `

var processingTail = func() string {
	var b strings.Builder
	b.WriteString(`) AS d CROSS JOIN (VALUES `)
	for i, st := range banking.ProcessingPath {
		if i > 0 {
			b.WriteByte(',')
		}
		// Status names are the package's own constants, upper-case letters
		// and underscores, so quoting them as literals is safe.
		fmt.Fprintf(&b, "(%d,'%s')", i, strings.ReplaceAll(st, "'", "''"))
	}
	b.WriteString(`) AS p ORDER BY d.column1, d.column2, p.column1`)
	return b.String()
}()

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

// insertPaymentRows inserts chunk and marks in written the keys the
// database accepted; ON CONFLICT DO NOTHING leaves an existing document
// untouched and RETURNING names only the rows really inserted (both engines).
func insertPaymentRows(ctx context.Context, tx *sql.Tx, dialect sqldb.Dialect, chunk []*newPayment, written map[string]bool) error {
	var b strings.Builder
	b.WriteString(`INSERT INTO banking_payments (org_id, external_id, kind, doc, kopecks, status, comment, roles, channel, created_at, updated_at) VALUES `)
	args := make([]any, 0, 11*len(chunk))
	for i, p := range chunk {
		if i > 0 {
			b.WriteByte(',')
		}
		writePlaceholders(&b, dialect, len(args), 11)
		sp := p.sp
		args = append(args, sp.OrgID, sp.Doc.ExternalID, string(sp.Kind), p.doc, sp.Kopecks, sp.Status, sp.Comment,
			p.roles, sp.Channel, micros(sp.CreatedAt), micros(sp.UpdatedAt))
	}
	b.WriteString(` ON CONFLICT (org_id, external_id) DO NOTHING RETURNING org_id, external_id`)
	rows, err := tx.QueryContext(ctx, b.String(), args...)
	if err != nil {
		return fmt.Errorf("insert payments: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var org, ext string
		if err := rows.Scan(&org, &ext); err != nil {
			return err
		}
		written[org+"\x00"+ext] = true
	}
	return rows.Err()
}

// writePlaceholders writes "($n+1,…,$n+k)" for PostgreSQL and "(?,…,?)"
// for SQLite: SQLite treats "$n" as a named parameter and resolves each name
// by a linear search, which makes a statement of thousands of parameters
// quadratic to prepare and bind; "?" is positional and costs nothing.
func writePlaceholders(b *strings.Builder, dialect sqldb.Dialect, n, k int) {
	b.WriteByte('(')
	for j := 1; j <= k; j++ {
		if j > 1 {
			b.WriteByte(',')
		}
		if dialect == sqldb.SQLite {
			b.WriteByte('?')
			continue
		}
		b.WriteByte('$')
		b.WriteString(strconv.Itoa(n + j))
	}
	b.WriteByte(')')
}

// rowsInsert accumulates the rows of one multi-row INSERT and executes it
// every rowsPerStatement rows.
type rowsInsert struct {
	dialect sqldb.Dialect
	head    string
	b       strings.Builder
	args    []any
	rows    int
}

func (r *rowsInsert) row(ctx context.Context, tx *sql.Tx, tail string, vals ...any) error {
	if r.rows == 0 {
		r.b.Reset()
		r.b.WriteString(r.head)
	} else {
		r.b.WriteByte(',')
	}
	writePlaceholders(&r.b, r.dialect, len(r.args), len(vals))
	r.args = append(r.args, vals...)
	r.rows++
	if r.rows == rowsPerStatement {
		return r.flush(ctx, tx, tail)
	}
	return nil
}

func (r *rowsInsert) flush(ctx context.Context, tx *sql.Tx, tail string) error {
	if r.rows == 0 {
		return nil
	}
	_, err := tx.ExecContext(ctx, r.b.String()+tail, r.args...)
	r.args, r.rows = r.args[:0], 0
	return err
}
