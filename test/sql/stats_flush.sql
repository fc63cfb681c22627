-- Tests only: makes the session's pending table and index counters visible to the next statement
-- (the database reports them when the session next goes idle, this once without waiting).
SELECT pg_stat_force_next_flush();
