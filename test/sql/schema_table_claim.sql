-- Tests only, inside a transaction that is rolled back: creates a table the baseline creates near
-- its end (sql/schema/08_receipts.sql), so that a baseline run waits there, half way, until this
-- transaction ends (and can be killed there).
CREATE TABLE usage_daily (claimed boolean);
