-- On SQLite a document created with its whole processing walk (walked_at,
-- 0006) no longer writes its final status's outbox row in the create's
-- commit: the row is implied by the document and materialized into
-- banking_payment_webhooks before anything reads the outbox
-- (payments_walk_outbox.go). Its three B-tree inserts per document (the row
-- and two indexes) were a fifth of the group commit's work (issue 4).
-- last_rowid is the rowid of the last document whose implied row is in the
-- outbox; the documents there now already have theirs. Documents are never
-- deleted, so new ones always get rowids above it (SQLite gives a new row
-- the largest rowid plus one).
CREATE TABLE banking_payment_walk_outbox (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    last_rowid INTEGER NOT NULL
);

INSERT INTO banking_payment_walk_outbox (id, last_rowid) SELECT 1, COALESCE(MAX(rowid), 0) FROM banking_payments;
