-- Every key of the tenant, oldest first; never the secret hash. $1 tenant_id
-- nullable: last_used_at, revoked_at
SELECT key_id, tenant_id, label, status, created_at, last_used_at, revoked_at, hint FROM api_keys_of($1);
