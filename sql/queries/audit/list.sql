-- A page of the tenant's audit trail, newest first, below a seq, of one event or of one family:
-- its events and its approvals' steps (the receipts whose event column is set). For an approval's
-- steps, what the payload does not say: the approval a protect opened, and the member whose vote
-- decided an outcome (the last vote it names).
-- $1 tenant_id, $2 before seq (null: from the newest), $3 event name (null: any), $4 family prefix
-- such as 'key.' (null: any), $5 row count
-- nullable: key_id, decision, event, protect_receipt_id, opened_approval_id, decided_by
SELECT r.receipt_id, r.tenant_id, r.kind, r.seq, r.prev_hash, r.chain_hash, r.key_id, r.protect_receipt_id, r.decision,
       r.request_id, r.content_hash, iso_time(r.issued_at) AS timestamp, r.payload, r.signature, r.event,
       -- The approval a protect opened or, for a retry of the same action by the same key, answered.
       CASE WHEN r.event = 'approval.requested' THEN
         coalesce((SELECT a.approval_id FROM approvals a WHERE a.tenant_id = $1 AND a.protect_receipt_id = r.receipt_id),
                  (SELECT a.approval_id FROM approvals a
                   WHERE a.tenant_id = $1 AND a.key_id = r.key_id AND a.action_hash = r.content_hash AND a.created_at <= r.issued_at
                   ORDER BY a.created_at DESC LIMIT 1))
       END AS opened_approval_id,
       -- The vote by its id as receipt_by_id() finds a receipt (a range of one id, in id order: the
       -- primary key), written out: every table of the statement names the tenant $1, so that a
       -- distributed cluster runs it on the tenant's shard (docs/scaling.md).
       CASE WHEN r.event IN ('approval.approved', 'approval.denied') THEN
         (SELECT v.payload::jsonb ->> 'member_id' FROM receipts v
          WHERE v.tenant_id = $1 AND v.receipt_id >= r.payload::jsonb -> 'outcome' -> 'votes' ->> -1
            AND v.receipt_id <= r.payload::jsonb -> 'outcome' -> 'votes' ->> -1
          ORDER BY v.receipt_id LIMIT 1)
       END AS decided_by
FROM receipts r
WHERE r.tenant_id = $1 AND r.event IS NOT NULL
  AND ($2::bigint IS NULL OR r.seq < $2::bigint)
  AND ($3::text IS NULL OR r.event = $3::text)
  AND ($4::text IS NULL OR starts_with(r.event, $4::text))
ORDER BY r.seq DESC
LIMIT $5;
