-- Revokes an active key of the tenant, or ends the overlap of a key rotated with one (its revoked_at stays);
-- no row when the key is another tenant's or unknown. The api_keys_guard trigger refuses (WK001) any other
-- revoked key. $1 tenant_id, $2 key_id, $3 the member who revokes
-- nullable: revoked_by
UPDATE api_keys SET status = 'revoked', revoked_at = coalesce(revoked_at, now()), revoked_by = CASE WHEN status = 'active' THEN $3 ELSE revoked_by END,
       overlap_until = NULL
WHERE tenant_id = $1 AND key_id = $2
RETURNING key_id, status, iso_time(revoked_at) AS revoked_at, revoked_by;
