-- A refresh token belongs to a chain: the grant it was first issued for and
-- every refresh that followed (reference §3). Only the newest refresh token
-- of a chain and the one used to get it (its reserve, for 2 h) may refresh;
-- a rotation revokes the chain's other refresh tokens, so retrying with the
-- reserve several times cannot leave several live tokens behind. Tokens
-- issued before this column carry no record of which token issued them, so
-- each starts a chain of its own, named by its hash.
ALTER TABLE banking_tokens ADD COLUMN chain TEXT NOT NULL DEFAULT '';
UPDATE banking_tokens SET chain = hash WHERE chain = '';
CREATE INDEX banking_tokens_chain ON banking_tokens(chain);
