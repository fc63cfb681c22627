-- A gateway by its id alone (the id in its URL, or in an OAuth resource indicator): its tenant
-- from the routes, then the gateway in its tenant. No row: no such gateway.
-- $1 gateway_id
SELECT gateway_id, tenant_id, name, upstream_url, upstream_auth, status FROM mcp_gateway_resolve($1::text);
