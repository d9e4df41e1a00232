-- Each organisation's card-limit application counter: reference §11 answers
-- an application with its number, which the bank gives one the partner
-- sent without (as it does a payment order's, §4). issued is the number
-- given last; CardStore.CreateLimit raises it in the transaction that stores
-- the application, so a refused application uses none up. An organisation
-- that already has applications starts after their count.
CREATE TABLE banking_card_limit_numbers (
    org_id TEXT PRIMARY KEY,
    issued BIGINT NOT NULL
);

INSERT INTO banking_card_limit_numbers (org_id, issued)
SELECT org_id, COUNT(*) FROM banking_card_limits GROUP BY org_id;
