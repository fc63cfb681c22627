-- The tenant's latest stored protect receipts, newest first, for re-deciding their inputs under a
-- draft policy. $1 tenant_id, $2 row count
SELECT receipt_id, key_id, payload, iso_time(issued_at) AS timestamp
FROM receipts
WHERE tenant_id = $1 AND kind = 'protect'
ORDER BY seq DESC
LIMIT $2;
