-- The tenant's tree head, read in one statement: the log's size and its RFC 9162 root (0x + hex);
-- no row: no such tenant. $1 tenant_id
SELECT coalesce(h.tree_size, 0) AS tree_size, '0x' || encode(receipt_tree_root(t.tenant_id, coalesce(h.tree_size, 0)), 'hex') AS root_hash
FROM tenants t LEFT JOIN receipt_heads h ON h.tenant_id = t.tenant_id
WHERE t.tenant_id = $1;
