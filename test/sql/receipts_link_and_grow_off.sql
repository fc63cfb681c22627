-- Tests only: switches the chain trigger off, so that a test can move a head by hand past a row it wrote (turn it back on after).
ALTER TABLE receipts DISABLE TRIGGER receipts_link_and_grow;
