package bankingsql

import (
	"context"
	"database/sql"
	"fmt"
)

// writePaymentBatchPostgres is writePaymentBatch for PostgreSQL: the whole
// batch — document rows, history rows and outbox rows (none for a walked
// document, as on SQLite) — is one statement whose columns arrive as
// arrays. On PostgreSQL every statement is a round
// trip, and a multi-row VALUES list has a different text for every batch
// size, each planned anew and crowding the driver's statement cache; this
// one has a single text at any size. The history and outbox inserts join
// the documents the first insert returned, so a document whose key already
// existed gets no rows (and its own WORKFLOW_FAULT), as on SQLite. Being
// one statement, it needs no explicit transaction: the store runs it alone
// (sqldb.GroupCommit.WithSingleStatement), and q is then the pool.
func writePaymentBatchPostgres(ctx context.Context, q querier, batch []*newPayment) ([]error, error) {
	var d struct {
		org, ext, kind, doc, status, comment, roles, channel []string
		kopecks, created, updated                            []int64
		walked                                               []*int64
	}
	var h, w struct {
		org, ext, status, comment, client []string
		at                                []int64
		// sent is the outbox rows' sent_external_id, queued their
		// created_at (w only).
		sent   []*string
		queued []*int64
	}
	for _, p := range batch {
		sp := p.sp
		d.org, d.ext, d.kind, d.doc = append(d.org, sp.OrgID), append(d.ext, p.key), append(d.kind, string(sp.Kind)), append(d.doc, p.doc)
		d.status, d.comment, d.roles, d.channel = append(d.status, sp.Status), append(d.comment, sp.Comment), append(d.roles, p.roles), append(d.channel, sp.Channel)
		d.kopecks, d.created, d.updated = append(d.kopecks, sp.Kopecks), append(d.created, micros(sp.CreatedAt)), append(d.updated, micros(sp.UpdatedAt))
		var walked *int64
		if at, ok := p.walkedAt.(int64); ok {
			walked = &at
		}
		d.walked = append(d.walked, walked)
		for _, m := range p.history {
			h.org, h.ext, h.status, h.comment, h.at = append(h.org, sp.OrgID), append(h.ext, p.key), append(h.status, m.Status), append(h.comment, m.Comment), append(h.at, micros(m.At))
		}
		for _, m := range p.final {
			w.org, w.ext, w.status, w.comment, w.at = append(w.org, sp.OrgID), append(w.ext, p.key), append(w.status, m.Status), append(w.comment, m.Comment), append(w.at, micros(m.At))
			w.client = append(w.client, p.client)
			var sent *string
			if p.sp.Doc.ExternalID != p.key {
				sent = &p.sp.Doc.ExternalID
			}
			w.sent = append(w.sent, sent)
			var queued *int64
			if q, ok := p.queued.(int64); ok {
				queued = &q
			}
			w.queued = append(w.queued, queued)
		}
	}
	rows, err := q.QueryContext(ctx, postgresBatch,
		d.org, d.ext, d.kind, d.doc, d.kopecks, d.status, d.comment, d.roles, d.channel, d.created, d.updated, d.walked,
		h.org, h.ext, h.status, h.comment, h.at,
		w.org, w.ext, w.status, w.comment, w.at, w.client, w.sent, w.queued)
	if err != nil {
		return nil, fmt.Errorf("insert payments: %w", err)
	}
	defer rows.Close()
	written := make(map[string]bool, len(batch))
	for rows.Next() {
		var org, ext string
		if err := rows.Scan(&org, &ext); err != nil {
			return nil, err
		}
		written[org+"\x00"+ext] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("insert payments: %w", err)
	}
	// Outside a transaction the statement commits as its answer ends:
	// Close reads to that end and reports a failed commit.
	if err := rows.Close(); err != nil {
		return nil, fmt.Errorf("insert payments: %w", err)
	}
	outcomes := make([]error, len(batch))
	for i, p := range batch {
		if !written[paymentKey(p)] {
			outcomes[i] = duplicatePayment(p.sp.Doc.ExternalID)
		}
	}
	return outcomes, nil
}

// querier is what writePaymentBatchPostgres needs of a transaction or pool.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// postgresBatch inserts a batch from arrays. History rows are inserted in
// their order in the arrays (WITH ORDINALITY … ORDER BY), so each
// document's moves get ascending ids, which is the order PaymentHistory
// reads them in. The statement's result is the keys of the documents
// written.
const postgresBatch = `WITH d AS (
	INSERT INTO banking_payments (org_id, external_id, kind, doc, kopecks, status, comment, roles, channel, created_at, updated_at, walked_at)
	SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::text[], $8::text[], $9::text[],
		$10::bigint[], $11::bigint[], $12::bigint[])
	ON CONFLICT (org_id, external_id) DO NOTHING
	RETURNING org_id, external_id
), h AS (
	INSERT INTO banking_payment_history (org_id, external_id, status, comment, at)
	SELECT m.org_id, m.external_id, m.status, m.comment, m.at
	FROM unnest($13::text[], $14::text[], $15::text[], $16::text[], $17::bigint[]) WITH ORDINALITY AS m(org_id, external_id, status, comment, at, n)
	JOIN d ON d.org_id = m.org_id AND d.external_id = m.external_id
	ORDER BY m.n
), w AS (
	INSERT INTO banking_payment_webhooks (org_id, external_id, sent_external_id, status, comment, event_time, next_at, client_id, created_at)
	SELECT m.org_id, m.external_id, m.sent, m.status, m.comment, m.at, m.at, m.client_id, m.queued
	FROM unnest($18::text[], $19::text[], $20::text[], $21::text[], $22::bigint[], $23::text[], $24::text[], $25::bigint[]) AS m(org_id, external_id, status, comment, at, client_id, sent, queued)
	JOIN d ON d.org_id = m.org_id AND d.external_id = m.external_id
)
SELECT org_id, external_id FROM d`
