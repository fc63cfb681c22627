-- Tests only: blocks every INSERT into schema_migrations until the caller's transaction ends, so
-- that a migration run stops between applying a file and recording it (and can be killed there).
LOCK TABLE schema_migrations IN SHARE MODE;
