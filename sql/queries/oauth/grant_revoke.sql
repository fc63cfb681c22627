-- Revokes a grant (oauth_grant_revoke()); revoked is false when it was not active.
-- $1 tenant_id, $2 grant_id, $3 revoked_by (member, or NULL for the service), $4 reason, $5 now
SELECT oauth_grant_revoke($1, $2, $3, $4, $5) AS revoked;
