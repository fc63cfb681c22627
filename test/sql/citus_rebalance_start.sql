-- Tests only, on a Citus coordinator: the rebalancer starts moving shards onto the nodes that hold
-- fewer (in the background; writes to a shard wait while it is copied).
SELECT citus_rebalance_start(shard_transfer_mode => 'block_writes') AS job_id;
