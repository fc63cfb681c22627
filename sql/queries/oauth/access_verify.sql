-- The grant of a live access token for a gateway, with the gateway and its sealed secrets for the
-- grant's member: the token unexpired, its grant active, the member still active (with their role
-- now), the gateway active. No row: the token does not hold. $1 gateway_id, $2 token hash, $3 now
-- nullable: key_secret_sealed, secret_sealed, member_secret_sealed
SELECT grant_id, tenant_id, account_id, member_id, role, client_id, client_name, redirect_uri, gateway_id, scope, expires_at,
       gateway_name, upstream_url, upstream_auth, gateway_status, key_secret_sealed, secret_sealed, member_secret_sealed
FROM oauth_access_grant($1::text, $2::text, $3::timestamptz);
