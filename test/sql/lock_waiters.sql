-- Tests only: how many sessions of this database are waiting for a lock right now.
SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock';
