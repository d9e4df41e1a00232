-- Webhook delivery state and log. state: PENDING (retrying), DELIVERED, FAILED
-- (gave up: a non-retryable answer or attempts exhausted).
ALTER TABLE banking_payment_webhooks ADD COLUMN state TEXT NOT NULL DEFAULT 'PENDING';

CREATE TABLE banking_payment_webhook_log (
    id          {{autoid}},
    webhook_id  BIGINT NOT NULL,
    attempt     INTEGER NOT NULL,
    at          BIGINT NOT NULL,
    http_status INTEGER NOT NULL,
    error       TEXT NOT NULL
);
CREATE INDEX banking_payment_webhook_log_by ON banking_payment_webhook_log (webhook_id, id);
