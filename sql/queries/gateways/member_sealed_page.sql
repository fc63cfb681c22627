-- Members' sealed upstream secrets after a (tenant, gateway, member) position, in key order (the reseal when JWT_SECRET changed).
-- $1 tenant_id, $2 gateway_id, $3 member_id of the last row of the previous page ('' each for the first), $4 limit
SELECT tenant_id, gateway_id, member_id, secret_sealed FROM mcp_gateway_secrets_sealed_page($1, $2, $3, $4::integer);
