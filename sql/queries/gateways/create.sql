-- A new active gateway with its own key (WT021 the member's role; WK002 the keys' cap; 23505 a live name taken).
-- $1 gateway_id, $2 tenant_id, $3 the member who registers it, $4 name, $5 upstream_url, $6 upstream_auth,
-- $7 sealed shared secret or NULL, $8 key_id, $9 the key secret's hash, $10 its hint, $11 the key secret sealed
-- nullable: created_by
SELECT gateway_id, name, upstream_url, upstream_auth, status, created_at, created_by
FROM mcp_gateway_create($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11);
