-- Everything a key-authenticated request needs, in one round trip: the key and its status, the
-- tenant's plan, its active policy version (no policy_id: the built-in default) and its verdicts
-- for the features bots call. Touches last_used_at at most once a minute, so busy keys do not turn
-- every request into a row write. $1 secret SHA-256 hex
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
SELECT k.key_id, k.tenant_id, k.status, t.plan,
       p.policy_id, p.version AS policy_version, p.hash AS policy_hash,
       v.verdicts
FROM k
JOIN tenants t ON t.tenant_id = k.tenant_id
LEFT JOIN LATERAL (
  SELECT policy_id, version, hash FROM policies WHERE tenant_id = k.tenant_id ORDER BY version DESC LIMIT 1
) p ON true
LEFT JOIN LATERAL (
  SELECT jsonb_object_agg(f.feature, jsonb_build_object('verdict', fa.verdict, 'required_plan', fa.required_plan)) AS verdicts
  FROM features f CROSS JOIN LATERAL feature_access(k.tenant_id, f.feature) fa
  WHERE f.feature IN ('simulate', 'protect', 'execute')
) v ON true;
