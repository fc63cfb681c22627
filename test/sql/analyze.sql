-- Tests only: statistics of every table as it is now (what autovacuum's ANALYZE would gather).
ANALYZE;
