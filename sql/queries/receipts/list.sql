-- A page of the tenant's receipts, newest first, below a seq. $1 tenant_id, $2 before seq (null: from the newest), $3 row count
SELECT receipt_id, tenant_id, kind, seq, prev_hash, chain_hash, key_id, protect_receipt_id, decision,
       request_id, content_hash, iso_time(issued_at) AS timestamp, payload, signature
FROM receipts
WHERE tenant_id = $1 AND ($2::bigint IS NULL OR seq < $2::bigint)
ORDER BY seq DESC
LIMIT $3;
