-- Every receipt of an approval, in log order: the protect that opened it, its votes, its outcome
-- and the execute of the outcome; each found by its tenant and id. Every table names the tenant
-- $1, so a distributed cluster routes the statement to the tenant's shard (docs/scaling.md).
-- $1 tenant_id, $2 approval_id
-- nullable: prev_hash, key_id, protect_receipt_id, decision
SELECT r.receipt_id, r.tenant_id, r.kind, r.seq, r.prev_hash, r.chain_hash, r.key_id, r.protect_receipt_id, r.decision,
       r.request_id, r.content_hash, iso_time(r.issued_at) AS timestamp, r.payload, r.signature
FROM receipts r
WHERE r.tenant_id = $1
  AND r.receipt_id IN (
    SELECT id FROM approvals a
    CROSS JOIN LATERAL (VALUES (a.protect_receipt_id), (a.outcome_receipt_id), (a.execute_receipt_id)) AS ids(id)
    WHERE a.tenant_id = $1 AND a.approval_id = $2
    UNION ALL
    SELECT v.receipt_id FROM approval_votes v WHERE v.tenant_id = $1 AND v.approval_id = $2
  )
ORDER BY r.seq;
