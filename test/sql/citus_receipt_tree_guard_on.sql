-- Tests only, on a Citus coordinator, as receipt_tree_guard_on on one server: Citus does not pass
-- ALTER TABLE ... ENABLE TRIGGER on to the shards, so each shard's copy of the guard (named with
-- the shard's id) is enabled again there.
SELECT run_command_on_shards('receipt_tree_nodes', $c$DO $d$ BEGIN EXECUTE 'ALTER TABLE ' || '%1$s' || ' ENABLE TRIGGER ' || quote_ident('receipt_tree_nodes_guard_' || substring('%1$s' from '_([0-9]+)$')); END $d$$c$);
