-- Tests only: tries to move a key to a status directly (revoked -> active must be refused). $1 key_id, $2 status
UPDATE api_keys SET status = $2, revoked_at = CASE WHEN $2 = 'revoked' THEN now() END WHERE key_id = $1 RETURNING status;
