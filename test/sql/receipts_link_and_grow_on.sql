-- Tests only: switches the chain trigger back on.
ALTER TABLE receipts ENABLE TRIGGER receipts_link_guard;
