-- Tests only, on a Citus coordinator: waits until the running rebalance has moved every shard.
SELECT citus_rebalance_wait();
