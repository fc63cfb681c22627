-- Tests only, inside a rolled-back transaction: tries to empty the receipt log.
TRUNCATE receipts;
