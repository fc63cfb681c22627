-- Takes one token of a key's rate bucket (limits.per_second, limits.burst). $1 tenant_id, $2 key_id, $3 per_second, $4 burst
SELECT allowed, retry_after FROM api_key_rate_take($1, $2, $3::integer, $4::integer);
