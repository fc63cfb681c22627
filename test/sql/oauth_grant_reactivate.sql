-- Tests only: a revoked grant made active again, which oauth_grant_guard refuses.
-- $1 tenant_id, $2 grant_id
UPDATE oauth_grants SET status = 'active', revoked_at = NULL, revoked_by = NULL, revoked_reason = NULL WHERE tenant_id = $1 AND grant_id = $2;
