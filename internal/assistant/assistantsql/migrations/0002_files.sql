CREATE TABLE assistant_files (
	seq {{autoid}},
	id TEXT NOT NULL UNIQUE,
	client_id TEXT NOT NULL REFERENCES assistant_clients(id),
	filename TEXT NOT NULL,
	purpose TEXT NOT NULL,
	media_type TEXT NOT NULL,
	bytes BIGINT NOT NULL,
	created_at BIGINT NOT NULL,
	content {{bytes}} NOT NULL
);

CREATE INDEX assistant_files_client ON assistant_files (client_id, seq);
