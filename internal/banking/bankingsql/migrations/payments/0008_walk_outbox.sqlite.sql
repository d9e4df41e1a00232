-- A document created with its whole processing walk (walked_at, 0006) no
-- longer writes its final status's outbox row in the create's commit: the
-- row is implied by the document and materialized into
-- banking_payment_webhooks before anything reads the outbox
-- (payments_walk_outbox.go). Its inserts (the row and two index entries)
-- were a fifth of the group commit's work (issue 4).
-- last_doc is the position of the last document whose implied rows are in
-- the outbox: its rowid here (the documents there now already have their
-- rows). Documents are never deleted, so new ones always get rowids above
-- it (SQLite gives a new row the largest rowid plus one).
CREATE TABLE banking_payment_walk_outbox (
    id       INTEGER PRIMARY KEY CHECK (id = 1),
    last_doc BIGINT NOT NULL
);

INSERT INTO banking_payment_walk_outbox (id, last_doc) SELECT 1, COALESCE(MAX(rowid), 0) FROM banking_payments;
