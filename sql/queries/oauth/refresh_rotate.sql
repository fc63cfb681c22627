-- A refresh token for new tokens (oauth_refresh_rotate()).
-- $1 tenant_id, $2 refresh hash, $3 client_id, $4 gateway_id, $5 access hash, $6 access expires_at,
-- $7 new refresh hash, $8 refresh expires_at, $9 now
-- nullable: grant_id, scope
SELECT outcome, grant_id, scope, revoked
FROM oauth_refresh_rotate($1, $2, $3, $4, $5, $6, $7, $8, $9);
