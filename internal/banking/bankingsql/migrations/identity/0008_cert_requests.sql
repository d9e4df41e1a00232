-- Certificate requests (reference §10): a user's PKCS#10 request for a new
-- signing key, per organisation and externalId, and the states it went
-- through (banking/certreq.go). cert_uuid names the certificate in
-- banking_certs that activation issued.
CREATE TABLE banking_cert_requests (
    org_id TEXT NOT NULL,
    external_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    owner_id TEXT NOT NULL,
    eio INTEGER NOT NULL,
    login TEXT NOT NULL,
    number TEXT NOT NULL,
    user_name TEXT NOT NULL,
    org_name TEXT NOT NULL,
    email TEXT NOT NULL,
    user_position TEXT NOT NULL,
    bicrypt_id TEXT NOT NULL,
    cms TEXT NOT NULL,
    csr {{bytes}} NOT NULL,
    status TEXT NOT NULL,
    cert_uuid TEXT NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL,
    printed_at BIGINT NOT NULL DEFAULT 0,
    activated_at BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (org_id, external_id)
);
