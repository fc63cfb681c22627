-- Tests only: tries to store a Merkle node directly (the database must refuse). $1 tenant_id, $2 level, $3 idx
INSERT INTO receipt_tree_nodes (tenant_id, level, idx, hash) VALUES ($1, $2, $3, sha256('forged'::bytea)) RETURNING idx;
