-- One receipt of the tenant, as receipt_by_id() finds it (a range of one id, in id order: a probe of
-- the primary key), written out rather than called: a distributed cluster refuses a SQL function
-- over tenant tables called with parameters, and routes this statement to the tenant's shard
-- (docs/scaling.md). $1 tenant_id, $2 receipt_id
-- nullable: prev_hash, key_id, protect_receipt_id, decision
SELECT r.receipt_id, r.tenant_id, r.kind, r.seq, r.prev_hash, r.chain_hash, r.key_id, r.protect_receipt_id, r.decision,
       r.request_id, r.content_hash, iso_time(r.issued_at) AS timestamp, r.payload, r.signature
FROM receipts r
WHERE r.tenant_id = $1 AND r.receipt_id >= $2 AND r.receipt_id <= $2
ORDER BY r.receipt_id
LIMIT 1;
