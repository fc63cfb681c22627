-- Tests only: whether this database is a Citus coordinator's.
SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') AS citus;
