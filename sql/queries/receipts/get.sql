-- One receipt of the tenant. $1 tenant_id, $2 receipt_id
SELECT receipt_id, tenant_id, kind, seq, prev_hash, chain_hash, key_id, protect_receipt_id, decision,
       request_id, content_hash, iso_time(issued_at) AS timestamp, payload, signature
FROM receipts
WHERE tenant_id = $1 AND receipt_id = $2;
