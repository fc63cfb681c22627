-- Tests only: tries to rewrite a tenant's stored Merkle nodes (the database must refuse). $1 tenant_id
UPDATE receipt_tree_nodes SET hash = sha256('forged'::bytea) WHERE tenant_id = $1 RETURNING idx;
