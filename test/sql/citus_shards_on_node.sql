-- Tests only, on a Citus coordinator: how many shards a node holds. $1 host, $2 port
SELECT count(*)::int AS shards FROM citus_shards WHERE nodename = $1::text AND nodeport = $2::int;
