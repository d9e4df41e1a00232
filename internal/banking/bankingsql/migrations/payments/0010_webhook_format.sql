-- The format of a partner's webhook bodies: 'json', the payload as it is,
-- or 'jose', its compact JWS under the bank's key (reference §12, §9.6).
-- Every setting made before the column was JSON, so that is the default.
ALTER TABLE banking_partner_webhooks ADD COLUMN format TEXT NOT NULL DEFAULT 'json';
