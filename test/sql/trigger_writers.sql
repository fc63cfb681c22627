-- Triggers that write a table other than their own (docs/scaling.md: distributed by tenant under
-- Citus, a trigger on a distributed table runs on a shard, where it may write no other table).
-- What a trigger writes: the tables named by INSERT INTO, UPDATE and DELETE FROM in its function,
-- and in the functions of this schema that function calls, to three levels (comments and string
-- literals left out). One row per trigger and table written.
WITH RECURSIVE fns AS (
  SELECT p.oid, p.proname, regexp_replace(p.prosrc, '--[^\n]*|''([^'']|'''')*''', '', 'g') AS prosrc FROM pg_proc p
  JOIN pg_namespace n ON n.oid = p.pronamespace AND n.nspname = current_schema()
  WHERE p.prolang IN (SELECT l.oid FROM pg_language l WHERE l.lanname IN ('plpgsql', 'sql'))
),
reach (tgoid, fn, depth) AS (
  SELECT t.oid, t.tgfoid, 0 FROM pg_trigger t WHERE NOT t.tgisinternal
  UNION
  SELECT r.tgoid, g.oid, r.depth + 1
  FROM reach r
  JOIN fns f ON f.oid = r.fn
  CROSS JOIN LATERAL regexp_matches(f.prosrc, '([a-z_][a-z0-9_]*)\s*\(', 'gi') AS m
  JOIN fns g ON g.proname = lower(m[1])
  WHERE r.depth < 3
)
SELECT DISTINCT c.relname AS table_name, t.tgname AS trigger_name, w.relname AS writes
FROM reach r
JOIN pg_trigger t ON t.oid = r.tgoid
JOIN pg_class c ON c.oid = t.tgrelid
JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = current_schema()
JOIN fns f ON f.oid = r.fn
CROSS JOIN LATERAL regexp_matches(f.prosrc, '(INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+([a-z_][a-z0-9_]*)', 'gi') AS m
JOIN pg_class w ON w.relname = lower(m[2]) AND w.relnamespace = n.oid AND w.relkind IN ('r', 'p')
WHERE w.relname <> c.relname
ORDER BY 1, 2, 3;
