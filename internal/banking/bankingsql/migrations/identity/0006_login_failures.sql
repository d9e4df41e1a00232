-- Failed sign-ins of the login throttle (banking.Identity.Login), kept in
-- the database so that every process of a deployment on one PostgreSQL
-- counts the same failures and a restart does not forget them. Times are
-- Unix nanoseconds, as elsewhere in the identity tables. Rows older than the
-- throttle's window are deleted as new failures arrive.
CREATE TABLE banking_login_failures (
    login TEXT NOT NULL,
    client TEXT NOT NULL,
    at BIGINT NOT NULL
);
CREATE INDEX banking_login_failures_key ON banking_login_failures(login, client, at);
CREATE INDEX banking_login_failures_at ON banking_login_failures(at);
