-- Tests only: a person's one-time tokens as stored, oldest first. $1 account_id
SELECT token_hash, purpose, status, iso_time(created_at) AS created_at, iso_time(expires_at) AS expires_at
FROM auth_tokens WHERE account_id = $1 ORDER BY created_at, token_hash;
