-- An authorization code for its tokens (oauth_code_redeem()).
-- $1 tenant_id, $2 code hash, $3 client_id, $4 redirect_uri, $5 gateway_id, $6 S256 of the verifier,
-- $7 access hash, $8 access expires_at, $9 refresh hash, $10 refresh expires_at, $11 now
-- nullable: grant_id
SELECT outcome, grant_id, revoked
FROM oauth_code_redeem($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11);
