-- Revokes an active key of the tenant; no row when the key is another tenant's or unknown.
-- The api_keys_guard trigger refuses (WK001) when the key is already revoked. $1 tenant_id, $2 key_id
UPDATE api_keys SET status = 'revoked', revoked_at = now()
WHERE tenant_id = $1 AND key_id = $2
RETURNING key_id, status, iso_time(revoked_at) AS revoked_at;
