-- The X-Client-ID a file was uploaded with ('' for none): the provider
-- lets a file made under one be downloaded only by requests that send the
-- same (assistant reference §2). Files uploaded before this column are
-- bound to none, as they were.
ALTER TABLE assistant_files ADD COLUMN header_client_id TEXT NOT NULL DEFAULT '';
