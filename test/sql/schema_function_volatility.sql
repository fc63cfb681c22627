-- Tests only: the volatility PostgreSQL records for each function of the service's schema
-- (provolatile: v volatile, s stable, i immutable).
SELECT p.proname AS name, p.provolatile AS volatility
FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
WHERE n.nspname = current_schema() AND p.prokind = 'f'
ORDER BY p.proname;
