-- A webhook carries the externalId as the partner sent it, but since keys
-- are folded to lower case (external_id of a document created as
-- 0F8FAD5B-… is 0f8fad5b-…) the outbox row's external_id is the key, not
-- that text. sent_external_id keeps the partner's text when it differs
-- from the key (NULL otherwise), written with the row by whoever queues it
-- (payments_webhook_sent.go), so the dispatcher and the delivery log read
-- it without a join.
ALTER TABLE banking_payment_webhooks ADD COLUMN sent_external_id TEXT;

-- Rows queued since keys were folded carry the key; their document still
-- has the partner's text. Only the rows whose text differs are rewritten,
-- events already delivered included, so the partner's delivery log shows
-- its own ids. A row whose document is missing keeps NULL: its external_id
-- is all there is.
UPDATE banking_payment_webhooks SET sent_external_id = (
    SELECT json_extract(p.doc, '$.externalId') FROM banking_payments p
    WHERE p.org_id = banking_payment_webhooks.org_id AND p.external_id = banking_payment_webhooks.external_id)
WHERE EXISTS (
    SELECT 1 FROM banking_payments p
    WHERE p.org_id = banking_payment_webhooks.org_id AND p.external_id = banking_payment_webhooks.external_id
        AND json_extract(p.doc, '$.externalId') <> p.external_id);
