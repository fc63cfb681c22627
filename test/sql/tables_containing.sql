-- Tests only: the tables holding a row of tenant $1 with any of the texts $2 (text[]) in any column.
SELECT c.table_name
FROM information_schema.columns c
JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name AND t.table_type = 'BASE TABLE'
CROSS JOIN LATERAL (
  SELECT query_to_xml(format('SELECT * FROM %I WHERE tenant_id = %L', c.table_name, $1::text), true, false, '')::text AS content
) x
WHERE c.table_schema = current_schema() AND c.column_name = 'tenant_id'
  AND EXISTS (SELECT 1 FROM unnest($2::text[]) AS n WHERE strpos(x.content, n) > 0);
