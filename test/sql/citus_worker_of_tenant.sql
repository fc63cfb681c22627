-- Tests only, on a Citus coordinator: the worker that holds tenant $1's shard group, and its data
-- directory (for a test that stops and starts it).
SELECT s.nodename, s.nodeport,
       (SELECT result FROM run_command_on_workers('SHOW data_directory') w WHERE w.nodename = s.nodename AND w.nodeport = s.nodeport) AS data_directory
FROM citus_shards s
WHERE s.table_name = 'tenants'::regclass AND s.shardid = get_shard_id_for_distribution_column('tenants', $1::text);
