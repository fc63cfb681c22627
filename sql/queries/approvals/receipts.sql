-- Every receipt of an approval, in log order: the protect that opened it, its votes, its outcome
-- and the execute of the outcome; each read by its tenant and id (receipt_by_id()). $1 tenant_id, $2 approval_id
-- nullable: prev_hash, key_id, protect_receipt_id, decision
SELECT r.receipt_id, r.tenant_id, r.kind, r.seq, r.prev_hash, r.chain_hash, r.key_id, r.protect_receipt_id, r.decision,
       r.request_id, r.content_hash, iso_time(r.issued_at) AS timestamp, r.payload, r.signature
FROM approvals a
CROSS JOIN LATERAL (
  SELECT a.protect_receipt_id AS id UNION ALL SELECT a.outcome_receipt_id UNION ALL SELECT a.execute_receipt_id
  UNION ALL SELECT v.receipt_id FROM approval_votes v WHERE v.tenant_id = a.tenant_id AND v.approval_id = a.approval_id
) ids
CROSS JOIN LATERAL receipt_by_id(a.tenant_id, ids.id) r
WHERE a.tenant_id = $1 AND a.approval_id = $2
ORDER BY r.seq;
