-- Tests only: deleting a grant's tokens, which the runtime role may not do.
-- $1 tenant_id, $2 grant_id
DELETE FROM oauth_tokens WHERE tenant_id = $1 AND grant_id = $2;
