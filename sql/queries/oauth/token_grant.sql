-- The grant a token (access or refresh) belongs to, for revocation (RFC 7009). No row: unknown.
-- $1 tenant_id, $2 token hash
SELECT g.grant_id, g.client_id, g.member_id, g.gateway_id, g.status
FROM oauth_tokens t
JOIN oauth_grants g ON g.tenant_id = t.tenant_id AND g.grant_id = t.grant_id
WHERE t.tenant_id = $1 AND t.token_hash = $2;
