-- Feature catalog and gating (contract section 5), and daily usage counters for quotas.
-- One table drives both the public catalog and the checks, so they can never disagree.

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

-- Request-only features an operator has granted to a tenant.
CREATE TABLE feature_grants (
  tenant_id   text NOT NULL REFERENCES tenants (tenant_id),
  feature     text NOT NULL REFERENCES features (feature),
  granted_by  text NOT NULL CHECK (char_length(granted_by) BETWEEN 1 AND 200),
  granted_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, feature)
);

CREATE FUNCTION feature_access(p_tenant_id text, p_feature text)
RETURNS TABLE (verdict text, required_plan text, access_mode text)
LANGUAGE sql STABLE AS $$
  SELECT
    CASE
      WHEN tp.rank < rp.rank THEN 'plan_required'
      WHEN f.access_mode = 'request_only'
           AND NOT EXISTS (SELECT 1 FROM feature_grants g WHERE g.tenant_id = t.tenant_id AND g.feature = f.feature)
        THEN 'feature_not_granted'
      ELSE 'allowed'
    END,
    f.required_plan,
    f.access_mode
  FROM features f
  JOIN tenants t ON t.tenant_id = p_tenant_id
  JOIN plans tp ON tp.plan = t.plan
  JOIN plans rp ON rp.plan = f.required_plan
  WHERE f.feature = p_feature
$$;
COMMENT ON FUNCTION feature_access(text, text) IS
  'Whether a tenant may use a feature: allowed, plan_required (plan below required_plan) or feature_not_granted (request-only, no grant).';

-- Per tenant and UTC day: how many protect and execute calls were accepted. Quotas compare these
-- with the tenant's plan limits inside the statement that counts, so they hold exactly.
CREATE TABLE usage_daily (
  tenant_id      text NOT NULL REFERENCES tenants (tenant_id),
  day            date NOT NULL,
  protect_count  integer NOT NULL DEFAULT 0 CHECK (protect_count >= 0),
  execute_count  integer NOT NULL DEFAULT 0 CHECK (execute_count >= 0),
  PRIMARY KEY (tenant_id, day)
);
