-- Partners' own webhook settings (issue 4). client_id is the identity
-- area's partner application id as text: no foreign keys across areas.
-- secret is the HMAC key sealed with AES-256-GCM under the deployment's
-- webhook key: it must be recovered to sign, so it cannot be hashed.
CREATE TABLE banking_partner_webhooks (
    client_id  TEXT PRIMARY KEY,
    url        TEXT NOT NULL,
    secret     TEXT NOT NULL,
    updated_at BIGINT NOT NULL
);
