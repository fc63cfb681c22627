-- Tests only: what the key lookup writes on every use, last_used_at. $1 key_id
UPDATE api_keys SET last_used_at = now() WHERE key_id = $1 RETURNING key_id;
