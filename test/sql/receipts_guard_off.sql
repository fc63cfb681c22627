-- Tests only (tamper-detection tests): lets the next statements rewrite receipts. Always followed by receipts_guard_on.
ALTER TABLE receipts DISABLE TRIGGER receipts_append_only;
