-- A receipt's leaf in the tenant's log (its seq and chain_hash) and the log's size, read in one
-- statement for an inclusion proof. $1 tenant_id, $2 receipt_id
SELECT r.receipt_id, r.seq, r.chain_hash, coalesce(h.tree_size, 0) AS tree_size
FROM receipt_by_id($1, $2) r
LEFT JOIN receipt_heads h ON h.tenant_id = r.tenant_id;
