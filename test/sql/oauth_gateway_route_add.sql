-- The route of a test gateway (mcp_gateway_routes), as the gateways' create does in its transaction.
-- $1 gateway_id, $2 tenant_id
INSERT INTO mcp_gateway_routes (gateway_id, tenant_id) VALUES ($1, $2)
RETURNING gateway_id;
