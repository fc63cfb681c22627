-- Counts one protect against a key's limits.protect_per_day. $1 tenant_id, $2 key_id, $3 the limit
SELECT allowed, used FROM api_key_protect_take($1, $2, $3::integer);
