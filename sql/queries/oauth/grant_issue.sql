-- Stores an access and a refresh token of an active grant (no code: the caller holds the grant).
-- No row: the grant is not active.
-- $1 tenant_id, $2 grant_id, $3 access hash, $4 access expires_at, $5 refresh hash, $6 refresh expires_at, $7 now
WITH g AS (
  UPDATE oauth_grants SET last_used_at = $7
  WHERE tenant_id = $1 AND grant_id = $2 AND status = 'active'
  RETURNING tenant_id, grant_id
)
INSERT INTO oauth_tokens (tenant_id, token_hash, grant_id, kind, created_at, expires_at)
SELECT g.tenant_id, v.hash, g.grant_id, v.kind, $7, v.expires_at
FROM g, (VALUES ($3::text, 'access'::text, $4::timestamptz), ($5::text, 'refresh'::text, $6::timestamptz)) AS v (hash, kind, expires_at)
RETURNING grant_id, kind;
