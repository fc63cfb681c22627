-- The tenant's tree head, read in one statement: the log's size and its RFC 9162 root (0x + hex);
-- no row: no such tenant (receipt_head(), which reads with this statement's snapshot). $1 tenant_id
SELECT h.tree_size, '0x' || encode(receipt_tree_root(h.tenant_id, h.tree_size), 'hex') AS root_hash
FROM receipt_head($1) h;
