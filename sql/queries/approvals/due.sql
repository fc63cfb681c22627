-- Pending approvals whose time is up, oldest expiry first, for the sweeper. $1 row count
SELECT a.approval_id, a.tenant_id, a.protect_receipt_id, a.key_id, a.action_hash, a.quorum, a.roles,
       extract(epoch FROM a.expires_at - a.created_at)::integer AS expires_in, a.execute_within, iso_time(a.expires_at) AS expires_at
FROM approvals a
WHERE a.status = 'pending' AND a.expires_at <= now()
ORDER BY a.expires_at
LIMIT $1;
