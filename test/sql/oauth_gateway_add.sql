-- A remote gateway for OAuth tests (its CRUD API is another capability's).
-- $1 gateway_id, $2 tenant_id, $3 name
INSERT INTO mcp_gateways (gateway_id, tenant_id, name, upstream_url) VALUES ($1, $2, $3, 'https://upstream.example/mcp')
RETURNING gateway_id, tenant_id;
