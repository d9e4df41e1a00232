CREATE TABLE banking_orgs (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    full_name TEXT NOT NULL,
    inn TEXT NOT NULL,
    kpp TEXT NOT NULL,
    ogrn TEXT NOT NULL
);

CREATE TABLE banking_accounts (
    number TEXT PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES banking_orgs(id),
    bic TEXT NOT NULL,
    corr_account TEXT NOT NULL,
    currency TEXT NOT NULL,
    name TEXT NOT NULL,
    status TEXT NOT NULL,
    open_date TEXT NOT NULL
);
CREATE INDEX banking_accounts_org ON banking_accounts(org_id);

CREATE TABLE banking_users (
    id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES banking_orgs(id),
    login TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    email TEXT NOT NULL,
    password_hash TEXT NOT NULL
);

CREATE TABLE banking_apps (
    client_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    secret_hash TEXT NOT NULL,
    redirect_uris TEXT NOT NULL
);

CREATE TABLE banking_offers (
    client_id TEXT NOT NULL REFERENCES banking_apps(client_id),
    account_number TEXT NOT NULL REFERENCES banking_accounts(number),
    PRIMARY KEY (client_id, account_number)
);

CREATE TABLE banking_certs (
    uuid TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES banking_users(id),
    org_id TEXT NOT NULL,
    der {{bytes}} NOT NULL,
    issuer TEXT NOT NULL,
    serial TEXT NOT NULL,
    type_name TEXT NOT NULL,
    role TEXT NOT NULL,
    active INTEGER NOT NULL
);
CREATE INDEX banking_certs_user ON banking_certs(user_id);

CREATE TABLE banking_tokens (
    hash TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    client_id TEXT NOT NULL,
    org_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    scopes TEXT NOT NULL,
    expires_at BIGINT NOT NULL,
    revoked_at BIGINT NOT NULL DEFAULT 0,
    reserve_until BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE banking_auth_codes (
    hash TEXT PRIMARY KEY,
    client_id TEXT NOT NULL,
    org_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    redirect_uri TEXT NOT NULL,
    scopes TEXT NOT NULL,
    challenge TEXT NOT NULL,
    nonce TEXT NOT NULL,
    expires_at BIGINT NOT NULL
);
