-- What would block distributing the tenant tables by tenant_id with Citus (docs/scaling.md). A
-- tenant table: one with a tenant_id column, except the tables named in $1 (text[]), which stay
-- off the tenant shards (routes, the outbox), and `tenants` itself.
--
-- Every primary-key or unique constraint of a tenant table that does not include tenant_id (Citus
-- needs the distribution column in each).
WITH kept AS (SELECT unnest($1::text[]) AS relname),
tables AS (
  SELECT c.oid, c.relname,
         EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped) AS has_tenant,
         c.relname IN (SELECT k.relname FROM kept k) AS kept
  FROM pg_class c
  JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = current_schema()
  WHERE c.relkind IN ('r', 'p')
),
tenant_tables AS (SELECT t.oid, t.relname FROM tables t WHERE t.has_tenant AND NOT t.kept)
SELECT c.relname AS table_name, con.conname AS constraint_name
FROM pg_constraint con
JOIN tenant_tables c ON c.oid = con.conrelid
WHERE con.contype IN ('p', 'u')
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
JOIN tenant_tables c ON c.oid = x.indrelid
WHERE x.indisunique AND NOT x.indisprimary
  AND NOT EXISTS (SELECT 1 FROM pg_constraint con WHERE con.conindid = x.indexrelid)
  AND NOT EXISTS (
    SELECT 1 FROM unnest(x.indkey::int2[]) AS k(attnum)
    JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
    WHERE a.attname = 'tenant_id'
  )
UNION ALL
-- Foreign keys that a co-located distribution refuses: into a tenant table (or `tenants`) from a
-- table that is not one, or from one without matching tenant_id to tenant_id (the two rows would
-- live on different shards); and from a tenant table into a table kept off the shards.
SELECT c.relname, con.conname
FROM pg_constraint con
JOIN tables c ON c.oid = con.conrelid
JOIN tables f ON f.oid = con.confrelid
WHERE con.contype = 'f'
  AND ((f.has_tenant AND NOT f.kept
        AND (c.kept OR NOT EXISTS (
          SELECT 1 FROM unnest(con.conkey, con.confkey) AS k(attnum, fattnum)
          JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
          JOIN pg_attribute b ON b.attrelid = f.oid AND b.attnum = k.fattnum
          WHERE a.attname = 'tenant_id' AND b.attname = 'tenant_id')))
       OR (c.has_tenant AND NOT c.kept AND f.kept))
ORDER BY 1, 2;
