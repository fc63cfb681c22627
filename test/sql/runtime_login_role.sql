-- Tests only (PostgreSQL): a login role that is a member of warden_runtime, as docs/deployment.md has operators make one.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'warden_test_runtime') THEN
    CREATE ROLE warden_test_runtime LOGIN IN ROLE warden_runtime;
  END IF;
END $$;
