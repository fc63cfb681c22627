-- Takes one token of a key's rate bucket (limits.per_second, limits.burst). $1 key_id, $2 per_second, $3 burst
SELECT allowed, retry_after FROM api_key_rate_take($1, $2::integer, $3::integer);
