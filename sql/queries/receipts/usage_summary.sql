-- A tenant's usage and current plan limits (limits NULL = unlimited), for quota headers and the
-- dashboard. receipts_stored counts decisions: audit events are not counted. No row: no such
-- tenant. $1 tenant_id, $2 UTC day as 'YYYY-MM-DD' (null: today in UTC)
SELECT t.plan,
       coalesce(u.protect_count, 0) AS protect_today,
       coalesce(u.execute_count, 0) AS execute_today,
       coalesce(h.tree_size - h.event_count, 0) AS receipts_stored,
       p.protect_per_day, p.execute_per_day, p.receipts_stored AS receipts_stored_limit
FROM tenants t
JOIN plans p ON p.plan = t.plan
LEFT JOIN usage_daily u ON u.tenant_id = t.tenant_id AND u.day = coalesce($2::date, (now() AT TIME ZONE 'UTC')::date)
LEFT JOIN receipt_heads h ON h.tenant_id = t.tenant_id
WHERE t.tenant_id = $1;
