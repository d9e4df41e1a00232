-- A partner's webhook pause (circuit breaker, payments_webhook_pause.go):
-- after a delivery that got no answer or a 429/503 the partner's other
-- pending events are moved to paused_until without an attempt, and
-- failures (consecutive such deliveries, reset by a delivered one) doubles
-- the next pause. The row is shared by every dispatcher on the database,
-- so another process and a restart keep the pause.
CREATE TABLE banking_webhook_pauses (
    client_id    TEXT PRIMARY KEY,
    failures     INTEGER NOT NULL,
    paused_until BIGINT NOT NULL
);

-- The pause moves one partner's pending events due before its end: this
-- index reads just those, not every event the partner ever had.
CREATE INDEX banking_payment_webhooks_client_due ON banking_payment_webhooks (client_id, state, next_at);
