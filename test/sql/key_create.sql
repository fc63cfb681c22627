-- Tests only: a key made by a member through api_key_create(), in a transaction a test holds open.
-- $1 key_id, $2 tenant_id, $3 secret hash, $4 hint, $5 the member who makes it
SELECT key_id FROM api_key_create($1, $2, 'racing', $3, $4, $5, '{}'::jsonb);
