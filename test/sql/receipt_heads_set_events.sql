-- Tests only: tries to change how many of a tenant's receipts its head counts as events. $1 tenant_id, $2 event_count
UPDATE receipt_heads SET event_count = $2 WHERE tenant_id = $1 RETURNING event_count;
