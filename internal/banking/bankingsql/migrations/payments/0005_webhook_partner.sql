-- The outbox row carries its partner (the client_id of the application
-- whose channel created the document, banking.PartnerOfChannel), so the
-- delivery log is filtered per partner on the outbox alone and the
-- dispatcher does not join the documents. Rows queued before this column
-- take it from their document.
ALTER TABLE banking_payment_webhooks ADD COLUMN client_id TEXT NOT NULL DEFAULT '';

UPDATE banking_payment_webhooks SET client_id = COALESCE((
    SELECT CASE WHEN p.channel LIKE 'API:%' THEN substr(p.channel, 5) ELSE p.channel END
    FROM banking_payments p
    WHERE p.org_id = banking_payment_webhooks.org_id AND p.external_id = banking_payment_webhooks.external_id), '');

CREATE INDEX banking_payment_webhooks_client ON banking_payment_webhooks (client_id, id);
