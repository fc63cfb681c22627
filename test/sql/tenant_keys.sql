-- Tests only: a tenant's API keys as stored, oldest first. $1 tenant_id
SELECT key_id, tenant_id, label, secret_hash, hint, status,
       iso_time(created_at) AS created_at, iso_time(last_used_at) AS last_used_at, iso_time(revoked_at) AS revoked_at
FROM api_keys WHERE tenant_id = $1 ORDER BY created_at, key_id;
