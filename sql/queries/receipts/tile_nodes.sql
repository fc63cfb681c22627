-- The stored Merkle nodes of level $2 (8 and up: a tile above level 0) with $3 <= idx < $4, as
-- hex concatenated in idx order, and how many there are (at most 256). $1 tenant_id, $2 level,
-- $3 first idx, $4 end idx
SELECT count(*)::integer AS count, coalesce(string_agg(encode(n.hash, 'hex'), '' ORDER BY n.idx), '') AS hex
FROM receipt_tree_nodes n
WHERE n.tenant_id = $1 AND n.level = $2 AND n.idx >= $3::bigint AND n.idx < $4::bigint;
