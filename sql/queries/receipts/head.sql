-- The size and last chain_hash of a tenant's log, and how many of its receipts are audit events;
-- no row: no such tenant (receipt_head()). $1 tenant_id
-- nullable: head_hash
SELECT h.tenant_id, h.tree_size, h.head_hash, h.event_count FROM receipt_head($1) h;
