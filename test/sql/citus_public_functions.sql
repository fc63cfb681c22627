-- Tests only: every function of the public schema, as a signature to_regprocedure() reads back.
SELECT p.oid::regprocedure::text AS signature
FROM pg_proc p
WHERE p.pronamespace = 'public'::regnamespace
ORDER BY 1;
