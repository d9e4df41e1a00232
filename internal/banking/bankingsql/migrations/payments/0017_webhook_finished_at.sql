-- When each finished outbox row (DELIVERED or FAILED) finished (µs), so
-- that the retention purge (PurgeWebhooks) reads the events finished
-- before its cutoff and no other. 0016's index held the finished events
-- in id order, but an event finishes long after it is queued when it is
-- retried for hours or parked, so events finished lately sat ahead of
-- older ones: a purge read the first 500 by id, found nothing old enough
-- among them and left every old event behind them until they aged too.
--
-- finished_at is written with the state that finishes a row (a delivery,
-- the last failed attempt, an expiry: the time its log entry has) and
-- cleared when a row is pending again. Rows finished before the column
-- get the time the purge read until now: their delivery, else their last
-- delivery log entry, else when they were queued. A row a process of an
-- older build finishes without it is stamped the same way by the purge
-- (PurgeWebhooks). A nullable column without a default is added without
-- rewriting the table on PostgreSQL.
ALTER TABLE banking_payment_webhooks ADD COLUMN finished_at BIGINT;

UPDATE banking_payment_webhooks SET finished_at = COALESCE(delivered_at,
    (SELECT MAX(l.at) FROM banking_payment_webhook_log l WHERE l.webhook_id = banking_payment_webhooks.id),
    created_at, event_time)
WHERE state IN ('DELIVERED', 'FAILED');

-- The finished events alone, oldest finish first: a purge reads the ones
-- finished before its cutoff and stops at the first younger one, however
-- many events are pending, parked or finished lately. An event still pays
-- for its entry only once it has finished. The id orders the events that
-- finished in one microsecond; the rows of an older build's process
-- (finished_at NULL) are found along it too, for the purge to stamp them.
-- 0016's index served the purge alone, and goes.
DROP INDEX banking_payment_webhooks_finished;

CREATE INDEX banking_payment_webhooks_finished_at ON banking_payment_webhooks (finished_at, id) WHERE state IN ('DELIVERED', 'FAILED');
