-- The key behind a secret, touching last_used_at at most once a minute so that busy keys do not
-- turn every request into a row write. $1 secret SHA-256 hex
WITH k AS (
  SELECT key_id, tenant_id, status FROM api_keys WHERE secret_hash = $1
), touched AS (
  UPDATE api_keys SET last_used_at = now()
  FROM k
  WHERE api_keys.key_id = k.key_id AND k.status = 'active'
    AND (api_keys.last_used_at IS NULL OR api_keys.last_used_at < now() - interval '60 seconds')
  RETURNING api_keys.key_id
)
SELECT k.key_id, k.tenant_id, k.status, t.plan
FROM k JOIN tenants t ON t.tenant_id = k.tenant_id;
