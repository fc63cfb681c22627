-- One grant of a tenant. No row: none.
-- $1 tenant_id, $2 grant_id
SELECT grant_id, gateway_id, member_id, client_id, client_name, scope, status
FROM oauth_grants
WHERE tenant_id = $1 AND grant_id = $2;
