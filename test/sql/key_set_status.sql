-- Tests only: tries to move a key to a status directly (revoked -> active must be refused). $1 key_id, $2 status
-- now() kept out of CASE and COALESCE (a NULL interval makes the sum NULL), which a distributed
-- cluster refuses there (docs/scaling.md).
UPDATE api_keys SET status = $2, revoked_at = now() + CASE WHEN $2 = 'revoked' THEN interval '0' END WHERE key_id = $1 RETURNING status;
