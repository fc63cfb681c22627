-- Roots of complete subtrees of a tenant's Merkle tree (receipt_tree_node(): stored, or folded from
-- the receipts below level 4), in the order asked; NULL for one the log does not cover.
-- $1 tenant_id, $2 levels, $3 indexes (same length)
SELECT encode(receipt_tree_node($1, w.level, w.idx), 'hex') AS hash
FROM unnest($2::integer[], $3::bigint[]) WITH ORDINALITY AS w(level, idx, ord)
ORDER BY w.ord;
