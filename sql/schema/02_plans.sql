-- The plan and feature catalogs (docs/api.md, Plans, usage and upgrades). One table drives both the public catalog
-- and the checks, so they can never disagree.

CREATE TABLE plans (
  plan             text PRIMARY KEY CHECK (plan ~ '^[a-z]+$'),
  rank             integer NOT NULL UNIQUE CHECK (rank >= 0),
  -- NULL means unlimited.
  protect_per_day  integer CHECK (protect_per_day >= 0),
  execute_per_day  integer CHECK (execute_per_day >= 0),
  receipts_stored  integer CHECK (receipts_stored >= 0)
);
INSERT INTO plans (plan, rank, protect_per_day, execute_per_day, receipts_stored) VALUES
  ('free', 0, 1000, 100, 1000),
  ('pro', 1, 5000, 500, 10000),
  ('enterprise', 2, NULL, NULL, NULL);

CREATE TABLE features (
  feature        text PRIMARY KEY CHECK (feature ~ '^[a-z][a-z_]*$'),
  name           text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
  description    text NOT NULL CHECK (char_length(description) BETWEEN 1 AND 500),
  required_plan  text NOT NULL REFERENCES plans (plan),
  access_mode    text NOT NULL CHECK (access_mode IN ('self_serve', 'request_only')),
  position       integer NOT NULL UNIQUE
);
INSERT INTO features (feature, name, description, required_plan, access_mode, position) VALUES
  ('simulate', 'Simulation', 'Dry-run named scenarios against the active policy.', 'free', 'self_serve', 1),
  ('protect', 'Protect', 'Ask whether an action is allowed; every decision is stored as a signed receipt.', 'free', 'self_serve', 2),
  ('execute', 'Execute', 'Bind an allowed decision to its execution, once.', 'free', 'self_serve', 3),
  ('custom_policy', 'Custom policy', 'Write your own ordered policy rules, versioned.', 'pro', 'self_serve', 4),
  ('receipt_export', 'Receipt export', 'Download every receipt as NDJSON.', 'pro', 'self_serve', 5),
  ('sso', 'Single sign-on', 'Log in to the console through your identity provider.', 'enterprise', 'request_only', 6),
  ('dedicated_region', 'Dedicated region', 'Your data kept in a region of your choice.', 'enterprise', 'request_only', 7);

-- Callers pass the grant lookup itself as p_granted: a function without a subquery is inlined,
-- and the lookup then runs only where it can change the answer.
CREATE FUNCTION feature_verdict(p_tenant_rank integer, p_required_rank integer, p_access_mode text, p_granted boolean)
RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE
    WHEN p_tenant_rank < p_required_rank THEN 'plan_required'
    WHEN p_access_mode = 'request_only' AND NOT p_granted THEN 'feature_not_granted'
    ELSE 'allowed'
  END
$$;
COMMENT ON FUNCTION feature_verdict(integer, integer, text, boolean) IS
  'The feature rule: allowed, plan_required (tenant plan ranks below the required plan) or feature_not_granted (request-only, not granted).';
