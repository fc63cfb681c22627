-- receipt_tree_root() of a tenant's log at every size from 0 to $2. $1 tenant_id, $2 the largest size
SELECT s AS size, '0x' || encode(receipt_tree_root($1, s), 'hex') AS root
FROM generate_series(0, $2::bigint) AS s
ORDER BY s;
