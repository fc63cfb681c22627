-- Tests only, on a Citus coordinator: the schema's functions the workers do not have (each node
-- answers the names of the public functions it lacks of the coordinator's list $1).
SELECT nodename, nodeport, result
FROM run_command_on_workers(format(
  'SELECT coalesce(string_agg(f, %L ORDER BY f), %L) FROM unnest(%L::text[]) AS f WHERE to_regprocedure(f) IS NULL',
  ',', '', $1::text[]));
