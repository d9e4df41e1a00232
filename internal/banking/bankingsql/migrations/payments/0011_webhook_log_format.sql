-- The body format each webhook delivery attempt sent, 'json' or 'jose'
-- (banking_partner_webhooks.format at the time of the attempt), so the
-- delivery log shows which attempts a partner got in which format. Rows
-- logged before the column cannot be told apart reliably (a partner may
-- have switched formats since), so they keep '' (unknown) rather than a
-- guess.
ALTER TABLE banking_payment_webhook_log ADD COLUMN format TEXT NOT NULL DEFAULT '';
