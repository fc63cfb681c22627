-- $1 tenant_id, $2 email (normalised), $3 bcrypt hash, $4 key_id, $5 secret SHA-256 hex, $6 hint
SELECT tenant_id, key_id, created_at FROM tenant_signup($1, $2, $3, $4, $5, $6);
