-- Disables or enables a test gateway.
-- $1 tenant_id, $2 gateway_id, $3 status
UPDATE mcp_gateways SET status = $3 WHERE tenant_id = $1 AND gateway_id = $2
RETURNING gateway_id;
