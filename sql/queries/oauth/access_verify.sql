-- The grant of a live access token for a gateway: the token unexpired, its grant active, the
-- member still active (with their role now), the gateway active. No row: the token does not hold.
-- $1 tenant_id, $2 token hash, $3 gateway_id, $4 now
SELECT g.grant_id, g.tenant_id, m.account_id, g.member_id, m.role, g.client_id, g.client_name, g.redirect_uri, g.gateway_id, g.scope, t.expires_at
FROM oauth_tokens t
JOIN oauth_grants g ON g.tenant_id = t.tenant_id AND g.grant_id = t.grant_id
JOIN members m ON m.tenant_id = g.tenant_id AND m.member_id = g.member_id
JOIN mcp_gateways w ON w.tenant_id = g.tenant_id AND w.gateway_id = g.gateway_id
WHERE t.tenant_id = $1 AND t.token_hash = $2 AND t.kind = 'access' AND t.expires_at > $4
  AND g.gateway_id = $3 AND g.status = 'active' AND m.status = 'active' AND w.status = 'active';
