-- No row: the key is unknown or another tenant's. WK001: the key is not active; WT002 the member's role.
-- $1 tenant_id, $2 key_id, $3 new key_id, $4 new secret SHA-256 hex, $5 new hint, $6 the member who rotates,
-- $7 seconds the old secret is still accepted (0: none)
-- nullable: created_by
SELECT revoked_key_id, key_id, tenant_id, label, status, created_at, created_by FROM api_key_rotate($1, $2, $3, $4, $5, $6, $7::integer);
