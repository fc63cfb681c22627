-- The totals of usage counters as committed, without a lock (simulate reads, counts nothing). $1 json array of {tenant_id, counter, scope, window_start}
SELECT k.tenant_id, k.counter, k.scope, k.window_start, coalesce(c.total, 0)::float8 AS total
FROM json_to_recordset($1::json) AS k(tenant_id text, counter text, scope text, window_start text)
LEFT JOIN usage_counters c ON c.tenant_id = k.tenant_id AND c.counter = k.counter AND c.scope = k.scope AND c.window_start = k.window_start::timestamptz;
