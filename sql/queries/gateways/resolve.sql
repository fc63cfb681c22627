-- A gateway by its id alone (the id in its URL, or in an OAuth resource indicator): its tenant
-- from the routes, then the gateway in its tenant. No row: no such gateway.
-- $1 gateway_id
SELECT g.gateway_id, g.tenant_id, g.name, g.upstream_url, g.upstream_auth, g.status
FROM mcp_gateway_routes r
JOIN mcp_gateways g ON g.tenant_id = r.tenant_id AND g.gateway_id = r.gateway_id
WHERE r.gateway_id = $1;
