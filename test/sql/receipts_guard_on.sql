-- Tests only: puts the append-only guard back.
ALTER TABLE receipts ENABLE TRIGGER receipts_append_only;
