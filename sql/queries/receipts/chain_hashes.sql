-- The Merkle leaves' inputs: chain_hash of seq 0 .. tree_size - 1, in order. $1 tenant_id, $2 tree_size
SELECT chain_hash FROM receipts WHERE tenant_id = $1 AND seq < $2 ORDER BY seq;
