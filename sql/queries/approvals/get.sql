-- One approval of the tenant with its terms and state, and the person who created the calling key.
-- $1 tenant_id, $2 approval_id
-- nullable: key_created_by_account
SELECT a.approval_id, a.tenant_id, a.protect_receipt_id, a.key_id, a.key_created_by,
       (SELECT m.account_id FROM members m WHERE m.tenant_id = a.tenant_id AND m.member_id = a.key_created_by) AS key_created_by_account,
       a.action_hash, a.rule, a.quorum, a.roles,
       extract(epoch FROM a.expires_at - a.created_at)::integer AS expires_in, a.execute_within, a.status,
       iso_time(a.created_at) AS created_at, iso_time(a.expires_at) AS expires_at, a.outcome_receipt_id,
       iso_time(a.decided_at) AS decided_at, iso_time(a.execute_before) AS execute_before, a.execute_receipt_id
FROM approvals a
WHERE a.tenant_id = $1 AND a.approval_id = $2;
