-- Tests only: moves a tenant's log head by hand. $1 tenant_id, $2 tree_size, $3 head_hash
UPDATE receipt_heads SET tree_size = $2, head_hash = $3 WHERE tenant_id = $1 RETURNING tree_size;
