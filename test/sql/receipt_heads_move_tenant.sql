-- Tests only: moves a tenant's log head by hand to another tenant. $1 tenant_id, $2 the tenant_id
-- it gets, $3 tree_size, $4 head_hash
UPDATE receipt_heads SET tenant_id = $2, tree_size = $3, head_hash = $4 WHERE tenant_id = $1 RETURNING tree_size;
