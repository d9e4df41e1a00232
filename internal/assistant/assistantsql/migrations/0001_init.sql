CREATE TABLE assistant_clients (
	id TEXT PRIMARY KEY,
	secret_hash TEXT NOT NULL,
	scope TEXT NOT NULL,
	created_at BIGINT NOT NULL
);

CREATE TABLE assistant_tokens (
	hash TEXT PRIMARY KEY,
	client_id TEXT NOT NULL REFERENCES assistant_clients(id),
	scope TEXT NOT NULL,
	expires_at BIGINT NOT NULL
);

CREATE INDEX assistant_tokens_expires ON assistant_tokens (expires_at);

CREATE TABLE assistant_balances (
	client_id TEXT NOT NULL REFERENCES assistant_clients(id),
	model TEXT NOT NULL,
	tokens BIGINT NOT NULL,
	PRIMARY KEY (client_id, model)
);

CREATE TABLE assistant_usage (
	client_id TEXT NOT NULL REFERENCES assistant_clients(id),
	model TEXT NOT NULL,
	tokens BIGINT NOT NULL,
	PRIMARY KEY (client_id, model)
);
