-- $1 bucket, $2 limit, $3 window seconds, $4 now
SELECT allowed, hits, retry_after FROM rate_limit_hit($1, $2, $3, $4::timestamptz);
