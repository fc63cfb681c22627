-- A receipt's leaf in the tenant's log (its seq and chain_hash) and the log's size, read in one
-- statement for an inclusion proof. $1 tenant_id, $2 receipt_id
-- The receipt found as in receipts/get.sql.
SELECT r.receipt_id, r.seq, r.chain_hash, coalesce(h.tree_size, 0) AS tree_size
FROM (SELECT x.receipt_id, x.seq, x.chain_hash FROM receipts x
      WHERE x.tenant_id = $1 AND x.receipt_id >= $2 AND x.receipt_id <= $2
      ORDER BY x.receipt_id LIMIT 1) r
LEFT JOIN receipt_heads h ON h.tenant_id = $1;
