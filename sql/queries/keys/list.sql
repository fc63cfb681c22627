-- A page of the tenant's keys, newest first, after the position ($2, $3) when given; never the secret hash.
-- $1 tenant_id, $2 created_at of the last key of the previous page (microseconds) or NULL, $3 its key_id, $4 limit
-- nullable: last_used_at, revoked_at, created_by, revoked_by, expires_at, actions, allowed_ips, overlap_until
SELECT key_id, tenant_id, label, status, created_at, last_used_at, revoked_at, hint, created_by, revoked_by,
       expires_at, enabled, actions, limits, allowed_ips, metadata, overlap_until, page_position
FROM api_keys_page($1, $2::timestamptz, $3, $4::integer);
