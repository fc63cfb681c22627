-- Tests only: calls the tree's writer outside an append (the database must refuse). $1 tenant_id, $2 lo, $3 hi
SELECT receipt_tree_grow(ARRAY[$1::text], ARRAY[$2::bigint], ARRAY[$3::bigint]);
