-- A new active key of the tenant. $1 key_id, $2 tenant_id, $3 label, $4 secret SHA-256 hex, $5 hint
INSERT INTO api_keys (key_id, tenant_id, label, secret_hash, hint)
VALUES ($1, $2, $3, $4, $5)
RETURNING key_id, tenant_id, label, status, iso_time(created_at) AS created_at;
