-- A document that ran the whole processing path (CREATED → … → IMPLEMENTED)
-- at one instant when it was created — every fully signed sandbox create —
-- records that walk as this one column of its own row instead of one history
-- row per move: PaymentHistory expands it into the path's moves, all at
-- walked_at, ahead of the document's history rows. NULL: no such walk.
-- Seven history rows and their index entries per document were most of the
-- group commit's work.
ALTER TABLE banking_payments ADD COLUMN walked_at BIGINT;

-- The dispatcher reads due events through banking_payment_webhooks_state_due
-- (0004); nothing reads by (delivered_at, next_at) any more, and every queued
-- event paid for that index entry.
DROP INDEX banking_payment_webhooks_due;
