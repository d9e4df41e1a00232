-- Limit applications are keyed by their externalId folded to lower case
-- (CardStore.CreateLimit, Limit and SignLimit fold it), but the releases
-- before keys were folded stored the partner's text as the key. Such an
-- application was found by no look-up (its state was 404, its sign 404)
-- and a second application with the same UUID was accepted beside it. This
-- migration folds those keys. External ids are UUIDs (checked since the
-- first release), so SQL's lower() folds them exactly as strings.ToLower.
--
-- A key is left as it is when folding it would make two applications one:
-- another application of the organisation has the same folded key (one
-- created since in lower case, or another old one differing in case only).
-- Those pairs are already the duplicate this migration prevents for the
-- others; the look-ups reach the one keyed in lower case.
UPDATE banking_card_limits SET external_id = lower(external_id)
WHERE external_id <> lower(external_id)
    AND NOT EXISTS (SELECT 1 FROM banking_card_limits q
        WHERE q.org_id = banking_card_limits.org_id AND lower(q.external_id) = lower(banking_card_limits.external_id)
            AND q.seq <> banking_card_limits.seq);
