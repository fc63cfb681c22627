-- Tests only, between receipts_guard_off and receipts_guard_on: forges a stored receipt. $1 receipt_id, $2 request_id
UPDATE receipts SET request_id = $2 WHERE receipt_id = $1 RETURNING receipt_id;
