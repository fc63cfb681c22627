-- The tenant's live gateways (active and disabled), newest first, with whether the caller stored a
-- secret of their own for each; never a secret.
-- $1 tenant_id, $2 member_id of the caller
-- nullable: created_by
SELECT g.gateway_id, g.name, g.upstream_url, g.upstream_auth, g.status, iso_time(g.created_at) AS created_at, g.created_by,
       (s.member_id IS NOT NULL) AS member_secret_set
FROM mcp_gateways g
LEFT JOIN mcp_gateway_secrets s ON s.tenant_id = g.tenant_id AND s.gateway_id = g.gateway_id AND s.member_id = $2
WHERE g.tenant_id = $1 AND g.status <> 'deleted'
ORDER BY g.created_at DESC, g.gateway_id DESC;
