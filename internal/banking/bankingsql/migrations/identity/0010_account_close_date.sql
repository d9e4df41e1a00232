-- The day a closed account was closed, which client-info answers as
-- closeDate (reference §10; null before). Accounts recorded before the
-- column, closed ones too, have none: the bank was not told the day.
ALTER TABLE banking_accounts ADD COLUMN close_date TEXT NOT NULL DEFAULT '';
