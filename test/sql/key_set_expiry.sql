-- Tests only: sets a key's expires_at to $2 seconds from now, as a PATCH would. $1 key_id, $2 seconds
UPDATE api_keys SET expires_at = now() + make_interval(secs => $2::integer) WHERE key_id = $1 RETURNING expires_at;
