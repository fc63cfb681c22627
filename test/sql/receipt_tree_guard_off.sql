-- Tests only (tamper-detection tests): lets the next statements rewrite stored Merkle nodes. Always followed by receipt_tree_guard_on.
ALTER TABLE receipt_tree_nodes DISABLE TRIGGER receipt_tree_nodes_guard;
