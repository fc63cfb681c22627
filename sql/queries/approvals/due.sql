-- Pending approvals whose time is up at $2 (the service's clock), oldest expiry first, for the
-- sweeper. $1 row count, $2 now
SELECT a.approval_id, a.tenant_id
FROM approvals a
WHERE a.status = 'pending' AND a.expires_at <= $2::timestamptz
ORDER BY a.expires_at
LIMIT $1;
