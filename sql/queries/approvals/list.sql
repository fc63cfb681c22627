-- A tenant's approvals, newest first, one page after the cursor (created_at, approval_id), pending
-- ones only or of one status when $2 names it. $1 tenant_id, $2 status or NULL, $3 cursor time or NULL, $4 cursor id or NULL, $5 row count
SELECT a.approval_id, a.tenant_id, a.protect_receipt_id, a.key_id, a.key_created_by, a.action_hash, a.rule, a.quorum, a.roles,
       extract(epoch FROM a.expires_at - a.created_at)::integer AS expires_in, a.execute_within, a.status,
       iso_time(a.created_at) AS created_at, iso_time(a.expires_at) AS expires_at, a.outcome_receipt_id,
       iso_time(a.decided_at) AS decided_at, iso_time(a.execute_before) AS execute_before, a.execute_receipt_id
FROM approvals a
WHERE a.tenant_id = $1
  AND ($2::text IS NULL OR a.status = $2::text)
  AND ($3::timestamptz IS NULL OR (a.created_at, a.approval_id) < ($3::timestamptz, $4::text))
ORDER BY a.created_at DESC, a.approval_id DESC
LIMIT $5;
