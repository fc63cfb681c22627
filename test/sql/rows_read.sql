-- Tests only: the rows the database's own counters say were read so far, per index (entries read
-- by index scans) and per table (rows read by sequential scans). Flush first (stats_flush).
SELECT 'index ' || s.indexrelname AS source, s.idx_tup_read::bigint AS n FROM pg_stat_user_indexes s
UNION ALL
SELECT 'table ' || t.relname, t.seq_tup_read::bigint FROM pg_stat_user_tables t;
