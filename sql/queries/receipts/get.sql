-- One receipt of the tenant (receipt_by_id(): a probe of the primary key). $1 tenant_id, $2 receipt_id
-- nullable: prev_hash, key_id, protect_receipt_id, decision
SELECT r.receipt_id, r.tenant_id, r.kind, r.seq, r.prev_hash, r.chain_hash, r.key_id, r.protect_receipt_id, r.decision,
       r.request_id, r.content_hash, iso_time(r.issued_at) AS timestamp, r.payload, r.signature
FROM receipt_by_id($1, $2) r;
