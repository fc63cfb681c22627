-- Tests only, on a Citus coordinator: moves shards onto the nodes that hold fewer, in this session
-- (citus_rebalance_start() does the same from background workers, which a busy test server may not
-- have to spare); writes to a shard wait while it is copied.
SELECT rebalance_table_shards(shard_transfer_mode => 'block_writes');
