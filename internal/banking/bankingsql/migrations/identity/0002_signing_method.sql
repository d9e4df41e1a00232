-- Each user's signing tool type (reference §4.2): 'OneTimePassword' users
-- may confirm payments by QR, 'Token' users sign with a certificate key and
-- may not. Every user made before the column signs with a certificate, so
-- 'Token' is the default.
ALTER TABLE banking_users ADD COLUMN signing_method TEXT NOT NULL DEFAULT 'Token';
