-- Tests only: every stored Merkle node of a tenant, by level then index. $1 tenant_id
SELECT level, idx::integer AS idx, encode(hash, 'hex') AS hash FROM receipt_tree_nodes WHERE tenant_id = $1 ORDER BY level, idx;
