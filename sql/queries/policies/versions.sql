-- A page of the tenant's policy versions, newest first, below a version; version 1 (the built-in
-- default, dated from signup) ends the list. $1 tenant_id, $2 before version (null: from the newest), $3 row count
-- nullable: hash, document, published_by
SELECT version, hash, document, created_at, published_by FROM (
  SELECT p.version, p.hash, p.document, iso_time(p.created_at) AS created_at, p.published_by
  FROM policies p
  WHERE p.tenant_id = $1
  UNION ALL
  SELECT 1, NULL, NULL, iso_time(t.created_at), NULL
  FROM tenants t
  WHERE t.tenant_id = $1
) v
WHERE $2::integer IS NULL OR v.version < $2::integer
ORDER BY v.version DESC
LIMIT $3;
