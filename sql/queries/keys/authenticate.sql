-- The key behind a secret, touching last_used_at at most once a minute so that busy keys do not
-- turn every request into a row write. $1 secret SHA-256 hex
WITH k AS (
  SELECT key_id, tenant_id, status FROM api_keys WHERE secret_hash = $1
), touched AS (
  UPDATE api_keys SET last_used_at = now()
  FROM k
  -- Re-check the row's own status: a revoke that commits while this waits for the row lock must
  -- make the key read as revoked, not trip the api_keys_guard trigger.
  WHERE api_keys.key_id = k.key_id AND api_keys.status = 'active'
    AND (api_keys.last_used_at IS NULL OR api_keys.last_used_at < now() - interval '60 seconds')
  RETURNING api_keys.key_id
)
SELECT k.key_id, k.tenant_id, k.status, t.plan
FROM k JOIN tenants t ON t.tenant_id = k.tenant_id;
