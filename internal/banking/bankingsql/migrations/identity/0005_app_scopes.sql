-- The scopes a partner app is registered for, space-separated; the
-- authorize endpoint refuses a request for any other with invalid_scope
-- (reference §2, §3). An empty list means the app is unrestricted: apps
-- made before this column, the sandbox's seeded app among them, could ask
-- for every scope, and narrowing them on upgrade would break integrations
-- that nobody told of a list. `partnerapi banking app scopes` sets it.
ALTER TABLE banking_apps ADD COLUMN scopes TEXT NOT NULL DEFAULT '';
