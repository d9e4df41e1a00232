-- A document created with its whole processing walk (walked_at, 0006) no
-- longer writes its final status's outbox row in the create's statement:
-- the row is implied by the document and materialized into
-- banking_payment_webhooks before anything reads the outbox
-- (payments_walk_outbox.go). Its heap tuple and two index entries were over
-- a third of the server's CPU per create (issue 4).
-- Documents get a position from a sequence, with an index to find the new
-- ones (an insert at the index's right edge); last_doc is the position of
-- the last document whose implied rows are in the outbox (the documents
-- there now already have their rows). The materializer locks the documents
-- against writes while it reads past last_doc, so no transaction holding a
-- lower position can commit after it (payments_walk_outbox.go).
ALTER TABLE banking_payments ADD COLUMN seq BIGSERIAL;

CREATE INDEX banking_payments_seq ON banking_payments (seq);

CREATE TABLE banking_payment_walk_outbox (
    id       INTEGER PRIMARY KEY CHECK (id = 1),
    last_doc BIGINT NOT NULL
);

INSERT INTO banking_payment_walk_outbox (id, last_doc) SELECT 1, COALESCE(MAX(seq), 0) FROM banking_payments;
