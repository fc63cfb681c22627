-- Test only, on a database of its own: approval_votes without its per-person key and its guard, as a
-- server that counted memberships would have stored votes.
DO $$
BEGIN
  ALTER TABLE approval_votes DROP CONSTRAINT approval_votes_pkey;
  ALTER TABLE approval_votes DISABLE TRIGGER approval_votes_guard;
END $$;
