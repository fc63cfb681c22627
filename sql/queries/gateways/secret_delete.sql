-- A member erases their own secret for a gateway (WG001 no live gateway).
-- $1 tenant_id, $2 member_id, $3 gateway_id
SELECT deleted FROM mcp_gateway_secret_delete($1, $2, $3);
