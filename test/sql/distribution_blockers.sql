-- Every primary-key or unique constraint of a table with a tenant_id column that does not include
-- tenant_id: what Citus would refuse when the table is distributed by tenant_id.
SELECT c.relname AS table_name, con.conname AS constraint_name
FROM pg_constraint con
JOIN pg_class c ON c.oid = con.conrelid
JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = current_schema()
WHERE con.contype IN ('p', 'u')
  AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped)
  AND NOT EXISTS (
    SELECT 1 FROM unnest(con.conkey) AS k(attnum)
    JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
    WHERE a.attname = 'tenant_id'
  )
UNION ALL
-- Unique indexes that are not constraints (partial ones included).
SELECT c.relname, i.relname
FROM pg_index x
JOIN pg_class i ON i.oid = x.indexrelid
JOIN pg_class c ON c.oid = x.indrelid
JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = current_schema()
WHERE x.indisunique AND NOT x.indisprimary
  AND NOT EXISTS (SELECT 1 FROM pg_constraint con WHERE con.conindid = x.indexrelid)
  AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped)
  AND NOT EXISTS (
    SELECT 1 FROM unnest(x.indkey::int2[]) AS k(attnum)
    JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
    WHERE a.attname = 'tenant_id'
  )
ORDER BY 1, 2;
