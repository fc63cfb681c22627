-- The size and last chain_hash of a tenant's log, and how many of its receipts are audit events;
-- no row: no such tenant. $1 tenant_id
SELECT t.tenant_id, coalesce(h.tree_size, 0) AS tree_size, h.head_hash, coalesce(h.event_count, 0) AS event_count
FROM tenants t LEFT JOIN receipt_heads h ON h.tenant_id = t.tenant_id
WHERE t.tenant_id = $1;
