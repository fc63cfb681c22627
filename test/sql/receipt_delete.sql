-- Tests only: tries to delete a stored receipt (the database must refuse). $1 receipt_id
DELETE FROM receipts WHERE receipt_id = $1 RETURNING receipt_id;
