-- The webhook outbox loses two costs every created document paid for and no
-- query uses (issue 4):
--  * UNIQUE (org_id, external_id, event_time): read by no query (EXPLAIN
--    QUERY PLAN of every outbox query goes by id, state_due or client), it
--    only backed ON CONFLICT DO NOTHING on the outbox inserts, and no insert
--    can meet it: a document's creation is deduplicated by its own key, and
--    a later final status is queued only by the AdvancePayment whose guarded
--    UPDATE moved the document, once. Its entries (org_id and external_id,
--    two UUIDs) were a fifth of the outbox's bytes.
--  * AUTOINCREMENT: it rewrites the sqlite_sequence row in every commit.
--    Outbox rows are never deleted, so a plain rowid never reuses an id
--    either: ids still only grow.
-- SQLite cannot drop a table constraint, so the table is rebuilt.
CREATE TABLE banking_payment_webhooks_new (
    id           INTEGER PRIMARY KEY,
    org_id       TEXT NOT NULL,
    external_id  TEXT NOT NULL,
    status       TEXT NOT NULL,
    comment      TEXT NOT NULL,
    event_time   BIGINT NOT NULL,
    attempts     INTEGER NOT NULL DEFAULT 0,
    next_at      BIGINT NOT NULL,
    delivered_at BIGINT,
    last_error   TEXT NOT NULL DEFAULT '',
    state        TEXT NOT NULL DEFAULT 'PENDING',
    client_id    TEXT NOT NULL DEFAULT ''
);

INSERT INTO banking_payment_webhooks_new (id, org_id, external_id, status, comment, event_time, attempts, next_at, delivered_at, last_error, state, client_id)
SELECT id, org_id, external_id, status, comment, event_time, attempts, next_at, delivered_at, last_error, state, client_id
FROM banking_payment_webhooks;

DROP TABLE banking_payment_webhooks;

ALTER TABLE banking_payment_webhooks_new RENAME TO banking_payment_webhooks;

CREATE INDEX banking_payment_webhooks_state_due ON banking_payment_webhooks (state, next_at);

CREATE INDEX banking_payment_webhooks_client ON banking_payment_webhooks (client_id, id);
