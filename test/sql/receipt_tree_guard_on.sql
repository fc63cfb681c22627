-- Tests only: puts the stored Merkle nodes' guard back.
ALTER TABLE receipt_tree_nodes ENABLE TRIGGER receipt_tree_nodes_guard;
