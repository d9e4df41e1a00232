-- When each webhook outbox row was queued (µs, the store's clock at the
-- write). --banking-webhook-max-age counts from it, not from event_time,
-- the status's own time, which may be older than the row: an event queued
-- now about an old status was failed as expired at its first claim. Rows
-- queued before the column keep NULL and are aged from their event_time,
-- the only time they have. A nullable column without a default is added
-- without rewriting the table on PostgreSQL. No index: the age is read
-- from the rows a claim hands out, and the expiry of parked rows goes by
-- banking_payment_webhooks_state_due (state, next_at), as their claim does.
ALTER TABLE banking_payment_webhooks ADD COLUMN created_at BIGINT;
