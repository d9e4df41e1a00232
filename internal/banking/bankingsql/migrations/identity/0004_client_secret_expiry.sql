-- When a partner app's client_secret stops authenticating, in Unix
-- nanoseconds; 0 means never. The provider's secrets live 40 days and are
-- replaced through change-client-secret (reference §3). Apps made before
-- this column get no expiry: their partners were never told of one, and a
-- secret that silently stopped working 40 days after an upgrade would break
-- integrations that have no way to see it coming. Their next secret, from
-- change-client-secret or `partnerapi banking app secret`, gets the
-- configured lifetime (--banking-client-secret-days).
ALTER TABLE banking_apps ADD COLUMN secret_expires_at BIGINT NOT NULL DEFAULT 0;
