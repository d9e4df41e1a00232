-- The organisation's territorial bank and whether a user is its sole
-- executive body (ЕИО), which user-info answers as terBank and
-- individualExecutiveAgency (reference §3). An empty ter_bank is read from
-- the organisation's accounts' BICs. The sandbox's user, who signs as sole
-- authority, is its organisation's executive here, as seeding never
-- rewrites rows it finds.
ALTER TABLE banking_orgs ADD COLUMN ter_bank TEXT NOT NULL DEFAULT '';
ALTER TABLE banking_users ADD COLUMN executive INTEGER NOT NULL DEFAULT 0;
UPDATE banking_users SET executive = 1 WHERE id = '7c1e2d3f-4a5b-4c6d-8e7f-901a2b3c4d5e';
