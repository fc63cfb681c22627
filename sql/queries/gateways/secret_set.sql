-- A member stores their own sealed secret for a per-member gateway (WG001 no live gateway; WG002 not per-member).
-- $1 tenant_id, $2 member_id, $3 gateway_id, $4 sealed secret
SELECT gateway_id, updated_at FROM mcp_gateway_secret_set($1, $2, $3, $4);
