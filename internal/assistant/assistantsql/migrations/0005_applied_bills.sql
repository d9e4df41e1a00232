-- The ids of the bills the store has applied, each written in the
-- transaction that charges its bill, so that a bill retried after its
-- commit went through but the answer was lost (the connection cut after
-- COMMIT) charges nothing again. made_at is when the bill was made (unix
-- milliseconds): ids are forgotten once older than any retry can be
-- (assistant.AppliedBillRetention).
CREATE TABLE assistant_applied_bills (
	id TEXT PRIMARY KEY,
	made_at BIGINT NOT NULL
);

CREATE INDEX assistant_applied_bills_made ON assistant_applied_bills (made_at);
