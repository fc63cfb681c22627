-- Tests only, on a Citus coordinator: how each table of the schema is laid out (distributed by a
-- column and co-located with whom, reference, or on the coordinator only).
SELECT c.relname AS table_name,
       coalesce(t.citus_table_type, 'coordinator') AS kind,
       t.distribution_column,
       t.colocation_id,
       (SELECT colocation_id FROM citus_tables WHERE table_name = 'tenants'::regclass) AS tenants_colocation_id
FROM pg_class c
LEFT JOIN citus_tables t ON t.table_name = c.oid
WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p')
ORDER BY c.relname;
