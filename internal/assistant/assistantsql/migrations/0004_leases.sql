-- The concurrent-request slots clients hold, one row a request, so that
-- every process sharing the database counts the same slots. A row lives
-- until its request ends or, if its process dies, until expires_at (unix
-- milliseconds), which the holding process keeps moving forward while the
-- request runs. No foreign key to assistant_clients: its check would lock
-- the client's row on every acquisition for nothing, since a lease is only
-- ever made for the client a token just named, and clients are never
-- deleted.
CREATE TABLE assistant_leases (
	id TEXT PRIMARY KEY,
	client_id TEXT NOT NULL,
	expires_at BIGINT NOT NULL
);

CREATE INDEX assistant_leases_client ON assistant_leases (client_id, expires_at);
