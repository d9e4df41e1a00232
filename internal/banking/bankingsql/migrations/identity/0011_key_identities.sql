-- The identity of each key the deployment signs or seals with, recorded by
-- the first serve that finds none (cmd/partnerapi banking_key_check.go):
-- the bank JWS key's kid, the RS256 id-token key's kid and the newest
-- webhook key's id (the one already in every sealed secret), never a key.
-- Every later start compares its own keys with these, so a replica or a
-- restored data directory holding other keys stops instead of signing
-- under another kid.
CREATE TABLE banking_key_identities (
    name TEXT PRIMARY KEY,
    identity TEXT NOT NULL
);
