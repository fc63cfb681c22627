-- A grant's stored state, for tests.
-- $1 tenant_id, $2 grant_id
SELECT status, revoked_reason, revoked_by FROM oauth_grants WHERE tenant_id = $1 AND grant_id = $2;
