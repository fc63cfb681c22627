-- A tenant's usage counters of windows that started at or after $2, newest window first. $1 tenant_id, $2 since
SELECT c.counter, c.scope, iso_time(c.window_start) AS window_start, c.total::float8 AS total
FROM usage_counters c
WHERE c.tenant_id = $1 AND c.window_start >= $2::timestamptz
ORDER BY c.window_start DESC, c.counter, c.scope
LIMIT 500;
