-- The bytes each client's files take, kept beside the files so that an
-- upload can be checked against the client's storage quota and counted in
-- one conditional upsert of this row (which both databases lock), rather
-- than a SUM over the files that two concurrent uploads would both pass.
CREATE TABLE assistant_file_usage (
	client_id TEXT PRIMARY KEY REFERENCES assistant_clients(id),
	bytes BIGINT NOT NULL
);

INSERT INTO assistant_file_usage (client_id, bytes)
SELECT client_id, SUM(bytes) FROM assistant_files GROUP BY client_id;
