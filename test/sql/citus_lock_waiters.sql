-- Tests only, on a Citus coordinator, as lock_waiters on one server: how many sessions of the
-- cluster wait for a lock right now (a delegated call waits on its worker, not here).
SELECT count(*)::int AS waiting FROM citus_lock_waits;
