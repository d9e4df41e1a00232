-- The sandbox clock's offset per organisation, in nanoseconds, added to
-- banking_card_clock's. POST /fintech/api/sandbox/clock moves only its
-- caller's organisation here: it asks for nothing but BUSINESS_CARD_LIMIT,
-- and when it moved the one shared row any partner could expire every
-- other tenant's card limits. The shared row stays the operator's: `banking
-- clock advance` on the command line still moves the whole sandbox.
CREATE TABLE banking_card_org_clock (
    org_id    TEXT PRIMARY KEY,
    offset_ns BIGINT NOT NULL
);
