-- Tests only: tries to move a tenant's log head back to empty. $1 tenant_id
UPDATE receipt_heads SET tree_size = 0, head_hash = NULL WHERE tenant_id = $1 RETURNING tree_size;
