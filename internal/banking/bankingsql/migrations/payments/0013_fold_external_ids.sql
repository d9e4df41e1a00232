-- Documents are keyed by their externalId folded to lower case (a UUID's
-- hex digits are case-insensitive), but rows stored before keys were folded
-- keep the partner's text as their key, so a lookup by another case of the
-- same UUID missed them and a second create in another case was accepted.
-- This migration folds those keys, in every table that carries a
-- document's key: its history rows and its webhook rows with it (a webhook
-- row keeps the partner's text in sent_external_id, 0012, for the partner's
-- receiver). External ids are UUIDs (checked since the first release), so
-- SQL's lower() folds them exactly as the store's strings.ToLower does.
--
-- A key is left as it is when folding it would make two documents one: the
-- folded key is already taken (a document created since in lower case), or
-- two keys of the organisation differ in case only (both created before).
-- Those documents stay reachable by their exact text (the store looks up
-- the folded key and the text as sent) and are listed in
-- banking_payment_unfolded_keys, which `partnerapi serve` reports at start,
-- for the operator to settle with the partner; nothing else reads it.
CREATE TABLE banking_payment_unfolded_keys (
    org_id      TEXT NOT NULL,
    external_id TEXT NOT NULL,
    PRIMARY KEY (org_id, external_id)
);

-- Keys differing in case only, none of them folded: one grouping over the
-- unfolded keys instead of a scan of the organisation per key.
INSERT INTO banking_payment_unfolded_keys (org_id, external_id)
SELECT p.org_id, p.external_id FROM banking_payments p
JOIN (SELECT org_id, lower(external_id) AS folded FROM banking_payments
    WHERE external_id <> lower(external_id)
    GROUP BY org_id, lower(external_id) HAVING COUNT(*) > 1) c ON c.org_id = p.org_id AND c.folded = lower(p.external_id)
WHERE p.external_id <> lower(p.external_id);

-- Keys whose folded form is already a document's key: a look-up by the
-- primary key each.
INSERT INTO banking_payment_unfolded_keys (org_id, external_id)
SELECT p.org_id, p.external_id FROM banking_payments p
WHERE p.external_id <> lower(p.external_id)
    AND EXISTS (SELECT 1 FROM banking_payments q WHERE q.org_id = p.org_id AND q.external_id = lower(p.external_id))
    AND NOT EXISTS (SELECT 1 FROM banking_payment_unfolded_keys u WHERE u.org_id = p.org_id AND u.external_id = p.external_id);

-- The history and webhook rows first, while their document still has the
-- key they match: only rows of a document that is folded below.
UPDATE banking_payment_history SET external_id = lower(external_id)
WHERE external_id <> lower(external_id)
    AND EXISTS (SELECT 1 FROM banking_payments p
        WHERE p.org_id = banking_payment_history.org_id AND p.external_id = banking_payment_history.external_id)
    AND NOT EXISTS (SELECT 1 FROM banking_payment_unfolded_keys u
        WHERE u.org_id = banking_payment_history.org_id AND u.external_id = banking_payment_history.external_id);

UPDATE banking_payment_webhooks SET sent_external_id = COALESCE(sent_external_id, external_id), external_id = lower(external_id)
WHERE external_id <> lower(external_id)
    AND EXISTS (SELECT 1 FROM banking_payments p
        WHERE p.org_id = banking_payment_webhooks.org_id AND p.external_id = banking_payment_webhooks.external_id)
    AND NOT EXISTS (SELECT 1 FROM banking_payment_unfolded_keys u
        WHERE u.org_id = banking_payment_webhooks.org_id AND u.external_id = banking_payment_webhooks.external_id);

UPDATE banking_payments SET external_id = lower(external_id)
WHERE external_id <> lower(external_id)
    AND NOT EXISTS (SELECT 1 FROM banking_payment_unfolded_keys u
        WHERE u.org_id = banking_payments.org_id AND u.external_id = banking_payments.external_id);
