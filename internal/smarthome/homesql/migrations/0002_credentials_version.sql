-- Bumped with every credential change, so servers that cache verified
-- credentials notice a rotation or deletion made by another process.
ALTER TABLE home_catalog ADD COLUMN credentials_version BIGINT NOT NULL DEFAULT 0;
