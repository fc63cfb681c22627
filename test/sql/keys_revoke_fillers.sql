-- Tests only: revokes the filler keys of tenant $1 (keys_fill_revoked.sql).
UPDATE api_keys SET status = 'revoked', revoked_at = now() WHERE tenant_id = $1 AND label = 'filler' AND status = 'active' RETURNING key_id;
