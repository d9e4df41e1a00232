-- Failed client-secret checks of the token endpoints' throttle
-- (assistant/auththrottle.go), one row a failure, kept in the database so
-- that every process on one PostgreSQL counts the same failures and a
-- restart does not forget them. addr is the caller's IP as web.ClientIP
-- resolves it; at is Unix nanoseconds. Rows older than the throttle's
-- window are deleted as new failures arrive. No foreign key to
-- assistant_clients: an unknown client id counts as a known one does.
CREATE TABLE assistant_auth_failures (
	client_id TEXT NOT NULL,
	addr TEXT NOT NULL,
	at BIGINT NOT NULL
);

CREATE INDEX assistant_auth_failures_key ON assistant_auth_failures (client_id, addr, at);
CREATE INDEX assistant_auth_failures_at ON assistant_auth_failures (at);
