-- The totals of usage counters, read under the locked log heads of their tenants (usage_read()).
-- $1 tenants, $2 json array of {tenant_id, counter, scope, window_start}
SELECT tenant_id, counter, scope, window_start, total::text AS exact FROM usage_read($1::text[], $2::json);
