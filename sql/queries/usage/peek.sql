-- The totals of usage counters as committed, without a lock: what simulate reads (it counts
-- nothing), and what an instance decides on when it knows none (receipt_append() checks each
-- decision's totals under the lock). One row per counter asked, in input order (ord 0-based):
-- total as a number, exact as the numeric's text; 0 when none.
-- $1 json array of {tenant_id, counter, scope, window_start}
SELECT (k.ord - 1)::integer AS ord, coalesce(c.total, 0)::float8 AS total, coalesce(c.total, 0)::text AS exact
FROM ROWS FROM (json_to_recordset($1::json) AS (tenant_id text, counter text, scope text, window_start text)) WITH ORDINALITY
     AS k(tenant_id, counter, scope, window_start, ord)
LEFT JOIN usage_counters c ON c.tenant_id = k.tenant_id AND c.counter = k.counter AND c.scope = k.scope
                          AND c.window_start = k.window_start::timestamptz
ORDER BY k.ord;
