-- Each organisation's payment-number counter (reference §4, field 3: the
-- bank numbers a payment order sent without a number). reserved is the
-- highest value of the organisation's unwrapped sequence handed to any
-- process: a process reserves a block of values with one UPDATE and numbers
-- documents from it in memory (banking/payment_number.go), so a restart
-- continues above every number it gave out. An organisation that already
-- has payment orders starts after their count, as its next document would.
CREATE TABLE banking_payment_numbers (
    org_id   TEXT PRIMARY KEY,
    reserved BIGINT NOT NULL
);

INSERT INTO banking_payment_numbers (org_id, reserved)
SELECT org_id, COUNT(*) FROM banking_payments WHERE kind = 'PAY_DOC_RU' GROUP BY org_id;
