-- Stored complete subtrees of a tenant's Merkle tree (receipt_tree_nodes), in the order asked; a
-- node not stored (beyond the log) is left out. $1 tenant_id, $2 levels, $3 indexes (same length)
SELECT encode(n.hash, 'hex') AS hash
FROM unnest($2::integer[], $3::bigint[]) WITH ORDINALITY AS w(level, idx, ord)
CROSS JOIN LATERAL (
  SELECT t.hash FROM receipt_tree_nodes t WHERE t.tenant_id = $1 AND t.level = w.level AND t.idx = w.idx LIMIT 1
) n
ORDER BY w.ord;
