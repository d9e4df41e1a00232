package bankingsql

import (
	"context"
	"database/sql"
	"fmt"

	"partnerapi/internal/postgres"
	"partnerapi/internal/sqldb"
)

// writePaymentBatchPool is the PostgreSQL committer's batch writer on the
// pool. A batch of walked documents only (a fully signed create's usual
// shape: no history rows, no outbox rows) is written with COPY, which cost
// PostgreSQL about a quarter less CPU per document than the statement of
// arrays (internal/postgres/copy.go). COPY has no ON CONFLICT: a batch that meets an
// existing key fails whole and writes nothing, and is then written again by
// writePaymentBatchPostgres, which gives the duplicates their own
// WORKFLOW_FAULT and commits the others. The group commit never has two
// creates of one key in flight, so the second attempt sees what the first
// one did.
func writePaymentBatchPool(ctx context.Context, pool *sql.DB, batch []*newPayment) ([]error, error) {
	if !rowsOnly(batch) {
		return writePaymentBatchPostgres(ctx, pool, batch)
	}
	err := copyPayments(ctx, pool, batch)
	if err == nil {
		return make([]error, len(batch)), nil
	}
	if !sqldb.IsUniqueViolation(err) {
		return nil, fmt.Errorf("insert payments: %w", err)
	}
	return writePaymentBatchPostgres(ctx, pool, batch)
}

// rowsOnly reports whether the batch writes its document rows and nothing
// else (no history rows, no outbox rows), as walked documents do.
func rowsOnly(batch []*newPayment) bool {
	for _, p := range batch {
		if len(p.history) > 0 || len(p.final) > 0 {
			return false
		}
	}
	return true
}

// paymentsCopy is the COPY of the document row's columns, in the order
// copyPayments gives their values.
var paymentsCopy = postgres.NewCopyTable("banking_payments",
	"org_id", "external_id", "kind", "doc", "kopecks", "status", "comment", "roles", "channel", "created_at", "updated_at", "walked_at")

// copyPayments writes the document rows of batch in one COPY, each column
// encoded as its type in migrations/payments (TEXT, BIGINT; walked_at NULL
// without a walk), with the values writePaymentBatchPostgres would give.
func copyPayments(ctx context.Context, pool *sql.DB, batch []*newPayment) error {
	rows := paymentsCopy.Rows()
	for _, p := range batch {
		sp := p.sp
		rows.Row()
		rows.Text(sp.OrgID)
		rows.Text(p.key)
		rows.Text(string(sp.Kind))
		rows.Text(p.doc)
		rows.Int8(sp.Kopecks)
		rows.Text(sp.Status)
		rows.Text(sp.Comment)
		rows.Text(p.roles)
		rows.Text(sp.Channel)
		rows.Int8(micros(sp.CreatedAt))
		rows.Int8(micros(sp.UpdatedAt))
		if at, ok := p.walkedAt.(int64); ok {
			rows.Int8(at)
		} else {
			rows.Null()
		}
	}
	n, err := postgres.CopyFrom(ctx, pool, rows)
	if err == nil && n != int64(len(batch)) {
		err = fmt.Errorf("copied %d of %d documents", n, len(batch))
	}
	return err
}
