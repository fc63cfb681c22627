-- One receipt of the tenant. $1 tenant_id, $2 receipt_id
-- Found by receipt_id alone (the primary key; the LIMIT keeps the tenant test out of the scan), so
-- that no plan can read the tenant's receipts by (tenant_id, seq) instead.
SELECT r.receipt_id, r.tenant_id, r.kind, r.seq, r.prev_hash, r.chain_hash, r.key_id, r.protect_receipt_id, r.decision,
       r.request_id, r.content_hash, iso_time(r.issued_at) AS timestamp, r.payload, r.signature
FROM (SELECT * FROM receipts WHERE receipt_id = $2 LIMIT 1) r
WHERE r.tenant_id = $1;
