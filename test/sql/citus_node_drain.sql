-- Tests only, on a Citus coordinator: moves every shard off a node. $1 host, $2 port
SELECT citus_drain_node($1::text, $2::int, shard_transfer_mode => 'block_writes');
