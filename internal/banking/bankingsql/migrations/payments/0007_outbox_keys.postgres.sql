-- The webhook outbox's UNIQUE (org_id, external_id, event_time) goes: no
-- query reads by it and no insert can meet it (0007_outbox_keys.sqlite.sql
-- says why); every created document paid for its index entry. The id stays
-- a BIGSERIAL: PostgreSQL's sequence costs no row write per commit.
ALTER TABLE banking_payment_webhooks DROP CONSTRAINT IF EXISTS banking_payment_webhooks_org_id_external_id_event_time_key;
