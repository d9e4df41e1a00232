-- A limit application signed later (POST …/limits/{externalId}/sign, ours):
-- roles are the signature roles it has collected (FIRST, SECOND, …,
-- comma-separated), which the sign compares and sets with its status so two
-- racing second signatures cannot both apply; exported_at is when it came
-- into force, from which the card's effective limit is ordered (a newer
-- application in force wins), and which a later-completed application sets
-- at completion, not at creation. Rows already EXPORTED came into force when
-- they were accepted.
ALTER TABLE banking_card_limits ADD COLUMN roles TEXT NOT NULL DEFAULT '';
ALTER TABLE banking_card_limits ADD COLUMN exported_at BIGINT NOT NULL DEFAULT 0;
UPDATE banking_card_limits SET exported_at = created_at WHERE bank_status = 'EXPORTED';
-- A PARTSIGNED application of the sandbox names its one role by the uuid of
-- §7 it was signed with; outside the sandbox a role is the certificate's,
-- which this area cannot read, and such an older application stays without
-- roles (the sign refuses it, naming why).
UPDATE banking_card_limits SET roles = 'FIRST'
    WHERE bank_status = 'PARTSIGNED' AND LOWER(signatures) LIKE '%"d5d4f811-f4d4-4205-a70f-58f772eeab72"%';
UPDATE banking_card_limits SET roles = 'SECOND'
    WHERE bank_status = 'PARTSIGNED' AND LOWER(signatures) LIKE '%"4f29c8ef-b55d-43c7-a321-f2b1303a29cd"%';
