-- Tests only: one tenant's stored row with its first owner's email and session epoch, without the password hash
-- (a tenant without an owner, which signup never leaves, still shows, with a null email). $1 tenant_id
SELECT t.tenant_id, a.email, t.plan, a.session_epoch, iso_time(t.created_at) AS created_at
  FROM tenants t LEFT JOIN members m ON m.tenant_id = t.tenant_id AND m.role = 'owner'
  LEFT JOIN accounts a ON a.account_id = m.account_id
 WHERE t.tenant_id = $1
 ORDER BY m.joined_at NULLS LAST LIMIT 1;
