package bankingsql

import "partnerapi/internal/sqldb"

// An outbox row is keyed like its document, by the folded externalId
// (paymentKeyOf), but the webhook, its X-Event-Id and the partner's
// delivery log must carry the externalId as the partner sent it: a partner
// that created 0F8FAD5B-… matches its own text, not our key. Every writer
// of an outbox row already has that text at hand — the create's batch
// writers and advance hold the document, and the materializer of walked
// documents reads the document row anyway — so the row keeps it in
// sent_external_id (migration 0012) and no reader needs another query or a
// join per delivery. The column is NULL when the text is the key itself,
// which it is for every partner writing UUIDs in lower case, so they pay
// no bytes for it. Readers select outboxExternalID.

// outboxExternalID is the externalId of an outbox row (alias w) as the
// partner sent it.
const outboxExternalID = `COALESCE(w.sent_external_id, w.external_id)`

// sentExternalID is the sent_external_id of an outbox row of a document
// stored under key whose partner sent externalID: nil (NULL) when they are
// the same text.
func sentExternalID(key, externalID string) any {
	if externalID == key {
		return nil
	}
	return externalID
}

// docSentExternalID is the SQL of sent_external_id for a row of
// banking_payments (its columns unqualified): the document's externalId
// when it differs from external_id, else NULL. Every document the store
// writes starts with {"externalId":"…" (banking.MarshalPayment, and
// encoding/json's field order as its fallback), so a document whose text
// is its key is recognised by that prefix alone, and only the others —
// upper-case externalIds and documents in any other shape — are parsed as
// JSON, the engine's own function: SQLite's json_extract, PostgreSQL's
// ->> on the text cast to json.
func docSentExternalID(d sqldb.Dialect) string {
	extract := `json_extract(doc, '$.externalId')`
	if d == sqldb.Postgres {
		extract = `(doc::json ->> 'externalId')`
	}
	return `CASE WHEN substr(doc, 1, length(external_id) + 16) = '{"externalId":"' || external_id || '"' THEN NULL
		ELSE NULLIF(` + extract + `, external_id) END`
}
