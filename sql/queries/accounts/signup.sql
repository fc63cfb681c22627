-- $1 tenant_id, $2 account_id, $3 member_id, $4 email (normalised), $5 bcrypt hash, $6 key_id, $7 secret SHA-256 hex, $8 hint
SELECT tenant_id, key_id, created_at FROM tenant_signup($1, $2, $3, $4, $5, $6, $7, $8);
