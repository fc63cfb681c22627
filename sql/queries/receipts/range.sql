-- The tenant's receipts with from <= seq < to, oldest first (export, chain checks).
-- $1 tenant_id, $2 from seq, $3 to seq (exclusive), $4 row count
SELECT receipt_id, tenant_id, kind, seq, prev_hash, chain_hash, key_id, protect_receipt_id, decision,
       request_id, content_hash, iso_time(issued_at) AS timestamp, payload, signature
FROM receipts
WHERE tenant_id = $1 AND seq >= $2 AND seq < $3
ORDER BY seq
LIMIT $4;
