-- Tests only: tries to delete a tenant's stored Merkle nodes (the database must refuse). $1 tenant_id
DELETE FROM receipt_tree_nodes WHERE tenant_id = $1 RETURNING idx;
