-- Organisations whose setting for card limits through the API is off
-- (reference §11: a limit application is then 400 WORKFLOW_FAULT). The
-- setting is on for every organisation not listed, as it was before the
-- table; `partnerapi banking card limit-setting` turns it off and on.
CREATE TABLE banking_card_limits_off (
    org_id TEXT PRIMARY KEY
);
