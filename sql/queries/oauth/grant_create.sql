-- A person's consent: the grant and its one-time code, in one statement.
-- $1 tenant_id, $2 grant_id, $3 gateway_id, $4 member_id, $5 client_id, $6 client_name,
-- $7 redirect_uri, $8 scope, $9 code_hash, $10 code_challenge, $11 code expires_at, $12 now
WITH g AS (
  INSERT INTO oauth_grants (tenant_id, grant_id, gateway_id, member_id, client_id, client_name, redirect_uri, scope, created_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $12)
  RETURNING tenant_id, grant_id, created_at
)
INSERT INTO oauth_codes (tenant_id, code_hash, grant_id, code_challenge, expires_at)
SELECT g.tenant_id, $9, g.grant_id, $10, $11 FROM g
RETURNING grant_id, expires_at;
