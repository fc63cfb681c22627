-- The route of a test gateway (mcp_gateway_routes): mcp_gateway_create() wrote it with the gateway.
-- $1 gateway_id, $2 tenant_id
SELECT gateway_id FROM mcp_gateway_routes WHERE gateway_id = $1 AND tenant_id = $2;
