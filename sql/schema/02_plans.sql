-- The plan and feature catalogs (docs/api.md, Plans, usage and upgrades). One table drives both the public catalog
-- and the checks, so they can never disagree.

CREATE TABLE plans (
  plan             text PRIMARY KEY CHECK (plan ~ '^[a-z]+$'),
  rank             integer NOT NULL UNIQUE CHECK (rank >= 0),
  -- NULL means unlimited.
  protect_per_day  integer CHECK (protect_per_day >= 0),
  execute_per_day  integer CHECK (execute_per_day >= 0),
  receipts_stored  integer CHECK (receipts_stored >= 0),
  -- Entities a tenant may store (sql/schema/15_entities.sql); every plan has a bound.
  entities         integer NOT NULL CHECK (entities >= 0),
  -- Moved by every change of the row (catalogs_guard()): see catalog_revision().
  revision         bigint NOT NULL DEFAULT 1 CHECK (revision >= 1)
);
INSERT INTO plans (plan, rank, protect_per_day, execute_per_day, receipts_stored, entities) VALUES
  ('free', 0, 1000, 100, 1000, 1000),
  ('pro', 1, 5000, 500, 10000, 10000),
  ('enterprise', 2, NULL, NULL, NULL, 100000);

CREATE TABLE features (
  feature        text PRIMARY KEY CHECK (feature ~ '^[a-z][a-z_]*$'),
  name           text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
  description    text NOT NULL CHECK (char_length(description) BETWEEN 1 AND 500),
  required_plan  text NOT NULL REFERENCES plans (plan),
  access_mode    text NOT NULL CHECK (access_mode IN ('self_serve', 'request_only')),
  position       integer NOT NULL UNIQUE,
  -- Moved by every change of the row (catalogs_guard()): see catalog_revision().
  revision       bigint NOT NULL DEFAULT 1 CHECK (revision >= 1)
);
INSERT INTO features (feature, name, description, required_plan, access_mode, position) VALUES
  ('simulate', 'Simulation', 'Dry-run named scenarios against the active policy.', 'free', 'self_serve', 1),
  ('protect', 'Protect', 'Ask whether an action is allowed; every decision is stored as a signed receipt.', 'free', 'self_serve', 2),
  ('execute', 'Execute', 'Bind an allowed decision to its execution, once.', 'free', 'self_serve', 3),
  ('custom_policy', 'Custom policy', 'Write your own ordered policy rules, versioned.', 'pro', 'self_serve', 4),
  ('receipt_export', 'Receipt export', 'Download every receipt as NDJSON.', 'pro', 'self_serve', 5),
  ('sso', 'Single sign-on', 'Log in to the console through your identity provider.', 'enterprise', 'request_only', 6),
  ('dedicated_region', 'Dedicated region', 'Your data kept in a region of your choice.', 'enterprise', 'request_only', 7);

-- The catalogs' freshness for the key contexts read from them (sql/schema/05_keys.sql): a row's
-- revision moves with each change of it, and a row is never deleted, so catalog_revision() moves
-- forward with every change of either catalog, whoever makes it (an operator's psql included). A
-- row trigger that reads nothing but its row: on a cluster the catalogs are reference tables, and
-- each copy's trigger computes the same revision from the same row (docs/scaling.md).
CREATE FUNCTION catalogs_guard() RETURNS trigger
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF TG_OP IN ('DELETE', 'TRUNCATE') THEN
    RAISE EXCEPTION 'the catalogs (plans, features) are changed in place, never deleted from' USING ERRCODE = 'WU007';
  END IF;
  NEW.revision := OLD.revision + 1;
  RETURN NEW;
END $$;
COMMENT ON FUNCTION catalogs_guard() IS
  'Moves a plan''s or feature''s revision on every update of it; refuses a DELETE or TRUNCATE of the catalogs (WU007), which would take revisions back.';
CREATE TRIGGER plans_guard BEFORE UPDATE OR DELETE ON plans FOR EACH ROW EXECUTE FUNCTION catalogs_guard();
CREATE TRIGGER plans_no_truncate BEFORE TRUNCATE ON plans FOR EACH STATEMENT EXECUTE FUNCTION catalogs_guard();
CREATE TRIGGER features_guard BEFORE UPDATE OR DELETE ON features FOR EACH ROW EXECUTE FUNCTION catalogs_guard();
CREATE TRIGGER features_no_truncate BEFORE TRUNCATE ON features FOR EACH STATEMENT EXECUTE FUNCTION catalogs_guard();

-- Grows with every insert into and update of the catalogs: the key contexts' epochs add it
-- (tenant_key_context_epochs()), so a context read before a catalog change is not reused after it.
CREATE FUNCTION catalog_revision() RETURNS bigint
LANGUAGE plpgsql STABLE AS $$
BEGIN
  RETURN coalesce((SELECT sum(p.revision) FROM plans p), 0) + coalesce((SELECT sum(f.revision) FROM features f), 0);
END $$;
COMMENT ON FUNCTION catalog_revision() IS
  'The sum of the plans'' and features'' revisions: moves forward with every insert into or update of either catalog.';

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
