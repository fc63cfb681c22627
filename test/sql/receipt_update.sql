-- Tests only: tries to rewrite a stored receipt's decision (the database must refuse). $1 receipt_id
UPDATE receipts SET decision = 'ALLOWED' WHERE receipt_id = $1 RETURNING receipt_id;
