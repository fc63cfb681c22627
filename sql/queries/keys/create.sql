-- A new active key of the tenant, within its caps (WK002 active, WK003 total; WT002 the member's role), with its properties
-- (WK004 an expiry not in the future, WK005 a daily limit above the plan's).
-- $1 key_id, $2 tenant_id, $3 label, $4 secret SHA-256 hex, $5 hint, $6 the member who makes it, $7 jsonb properties
-- nullable: created_by
SELECT key_id, tenant_id, label, status, created_at, created_by FROM api_key_create($1, $2, $3, $4, $5, $6, $7::jsonb);
