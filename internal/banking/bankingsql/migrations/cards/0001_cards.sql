-- Business cards of client organisations. org_id is IDENTITY's id as text:
-- no foreign keys across areas.
CREATE TABLE banking_cards (
    org_id TEXT NOT NULL,
    card_id TEXT NOT NULL,
    account_number TEXT NOT NULL,
    bic TEXT NOT NULL,
    pan TEXT NOT NULL,
    holder_name TEXT NOT NULL,
    holder_birthday TEXT NOT NULL,
    expiry_date TEXT NOT NULL,
    status TEXT NOT NULL,
    embossed_text TEXT NOT NULL,
    card_type TEXT NOT NULL,
    PRIMARY KEY (org_id, card_id)
);

CREATE INDEX banking_cards_account ON banking_cards (org_id, account_number);

-- Accounts on which a partner application signed the offer; until IDENTITY
-- publishes its own offer records the card area keeps this list.
CREATE TABLE banking_card_offer_accounts (
    partner_id TEXT NOT NULL,
    org_id TEXT NOT NULL,
    account_number TEXT NOT NULL,
    PRIMARY KEY (partner_id, org_id, account_number)
);

CREATE TABLE banking_card_limits (
    seq {{autoid}},
    org_id TEXT NOT NULL,
    external_id TEXT NOT NULL,
    partner_id TEXT NOT NULL,
    card_id TEXT NOT NULL,
    code TEXT NOT NULL,
    amount TEXT NOT NULL,
    doc_date TEXT NOT NULL,
    doc_number TEXT NOT NULL,
    signatures TEXT NOT NULL,
    bank_status TEXT NOT NULL,
    bank_comment TEXT NOT NULL,
    channel_info TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    UNIQUE (org_id, external_id)
);

CREATE INDEX banking_card_limits_card ON banking_card_limits (org_id, card_id, bank_status);

-- One row: the sandbox clock's offset from the wall clock, in nanoseconds.
CREATE TABLE banking_card_clock (
    id INTEGER PRIMARY KEY,
    offset_ns BIGINT NOT NULL
);
