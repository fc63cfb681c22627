-- One key of the tenant as GET /customer/keys lists it. $1 tenant_id, $2 key_id
-- nullable: last_used_at, revoked_at, created_by, revoked_by, expires_at, actions, allowed_ips, overlap_until
SELECT key_id, tenant_id, label, status, created_at, last_used_at, revoked_at, hint, created_by, revoked_by,
       expires_at, enabled, actions, limits, allowed_ips, metadata, overlap_until
FROM api_keys_page($1, NULL, NULL, 1000)
WHERE key_id = $2;
