-- The tenant's latest custom policy version; no row: the tenant uses the built-in default. $1 tenant_id
SELECT policy_id, version, hash, document, iso_time(created_at) AS created_at, published_by
FROM policies
WHERE tenant_id = $1
ORDER BY version DESC
LIMIT 1;
