-- The dispatcher reads due events by state and time; events of partners
-- without a webhook URL are PARKED (payments_webhook.go) so they are not
-- read on every tick.
CREATE INDEX banking_payment_webhooks_state_due ON banking_payment_webhooks (state, next_at);
