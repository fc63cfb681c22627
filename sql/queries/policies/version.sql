-- One custom policy version of the tenant. $1 tenant_id, $2 version
SELECT policy_id, version, hash, document, iso_time(created_at) AS created_at, published_by
FROM policies
WHERE tenant_id = $1 AND version = $2;
