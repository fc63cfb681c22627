-- A tenant's grants, newest first: one member's ($2), or every member's ($2 NULL).
-- $1 tenant_id, $2 member_id or NULL
-- nullable: gateway_name, member_email
SELECT g.grant_id, g.gateway_id, w.name AS gateway_name, g.member_id, a.email AS member_email, g.client_id, g.client_name,
       g.scope, g.status, g.created_at, g.last_used_at, g.revoked_at, g.revoked_reason
FROM oauth_grants g
LEFT JOIN mcp_gateways w ON w.tenant_id = g.tenant_id AND w.gateway_id = g.gateway_id
LEFT JOIN members m ON m.tenant_id = g.tenant_id AND m.member_id = g.member_id
LEFT JOIN accounts a ON a.account_id = m.account_id
WHERE g.tenant_id = $1 AND ($2::text IS NULL OR g.member_id = $2)
ORDER BY g.created_at DESC, g.grant_id
LIMIT 500;
