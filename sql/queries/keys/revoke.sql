-- Revokes an active key of the tenant, or ends the overlap of a key rotated with one (api_key_revoke());
-- no row when the key is another tenant's or unknown; WK001 any other revoked key. $1 tenant_id, $2 key_id,
-- $3 the member who revokes
-- nullable: revoked_by
SELECT key_id, status, revoked_at, revoked_by FROM api_key_revoke($1, $2, $3);
