-- Whether this database is a Citus coordinator's: the citus extension is installed in it.
SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') AS citus;
