-- Request-only features granted by an operator, and the one check of a tenant's access to a
-- feature (its plan's rank and its grants against the catalog).

-- Request-only features an operator has granted to a tenant.
CREATE TABLE feature_grants (
  tenant_id   text NOT NULL REFERENCES tenants (tenant_id),
  feature     text NOT NULL REFERENCES features (feature),
  granted_by  text NOT NULL CHECK (char_length(granted_by) BETWEEN 1 AND 200),
  granted_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, feature)
);

-- A request-only feature granted or withdrawn moves the tenant's key context (05_keys.sql).
CREATE TRIGGER feature_grants_key_context AFTER INSERT OR UPDATE OR DELETE ON feature_grants
  FOR EACH ROW EXECUTE FUNCTION key_context_changed();
-- A grant is withdrawn by feature_revoke(), one tenant's at a time: a TRUNCATE, which no row trigger
-- sees, would leave the tenants' key contexts in use (WU007).
CREATE FUNCTION feature_grants_no_truncate() RETURNS trigger
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  RAISE EXCEPTION 'feature grants are withdrawn one by one (feature_revoke()), never truncated' USING ERRCODE = 'WU007';
END $$;
COMMENT ON FUNCTION feature_grants_no_truncate() IS 'Refuses a TRUNCATE of feature_grants (WU007): each withdrawal moves its tenant''s key context.';
CREATE TRIGGER feature_grants_no_truncate BEFORE TRUNCATE ON feature_grants
  FOR EACH STATEMENT EXECUTE FUNCTION feature_grants_no_truncate();

CREATE FUNCTION feature_access(p_tenant_id text, p_feature text)
RETURNS TABLE (verdict text, required_plan text, access_mode text)
LANGUAGE plpgsql STABLE AS $$
BEGIN
  -- PL/pgSQL rather than SQL, as member_session(): a distributed cluster refuses a SQL function's
  -- statement over tenant tables called with parameters (docs/scaling.md).
  RETURN QUERY
    SELECT feature_verdict(tp.rank, rp.rank, f.access_mode,
                           EXISTS (SELECT 1 FROM feature_grants g WHERE g.tenant_id = p_tenant_id AND g.feature = f.feature)),
           f.required_plan, f.access_mode
    FROM features f
    JOIN tenants t ON t.tenant_id = p_tenant_id
    JOIN plans tp ON tp.plan = t.plan
    JOIN plans rp ON rp.plan = f.required_plan
    WHERE f.feature = p_feature;
END $$;
COMMENT ON FUNCTION feature_access(text, text) IS
  'Whether a tenant may use a feature, by feature_verdict(): allowed, plan_required or feature_not_granted.';

CREATE FUNCTION feature_grant(p_tenant_id text, p_feature text, p_granted_by text)
RETURNS TABLE (tenant_id text, feature text, granted_by text, granted_at text)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF p_granted_by IS NULL OR btrim(p_granted_by) = '' THEN
    RAISE EXCEPTION 'name who grants it' USING ERRCODE = 'WU004';
  END IF;
  IF NOT EXISTS (SELECT 1 FROM features f WHERE f.feature = p_feature AND f.access_mode = 'request_only') THEN
    RAISE EXCEPTION '% is not a request-only feature', p_feature USING ERRCODE = 'WU004';
  END IF;
  IF NOT EXISTS (SELECT 1 FROM tenants t WHERE t.tenant_id = p_tenant_id) THEN
    RAISE EXCEPTION 'no tenant %', p_tenant_id USING ERRCODE = 'WU004';
  END IF;
  INSERT INTO feature_grants AS g (tenant_id, feature, granted_by) VALUES (p_tenant_id, p_feature, btrim(p_granted_by))
  ON CONFLICT ON CONSTRAINT feature_grants_pkey DO NOTHING;
  -- A grant that was there already changes nothing, and records nothing.
  IF FOUND THEN
    PERFORM audit_operator_event(p_tenant_id, 'feature.granted', p_granted_by, jsonb_build_object('feature', p_feature));
  END IF;
  RETURN QUERY
    SELECT g.tenant_id, g.feature, g.granted_by, iso_time(g.granted_at) FROM feature_grants g
    WHERE g.tenant_id = p_tenant_id AND g.feature = p_feature;
END $$;
COMMENT ON FUNCTION feature_grant(text, text, text) IS
  'Grants a request-only feature to a tenant (idempotent; a new grant queues the audit event feature.granted). It works once the tenant''s '
  'plan also reaches the feature''s required plan.';

-- p_revoked_by: the operator, for the audit trail (NULL: "operator").
CREATE FUNCTION feature_revoke(p_tenant_id text, p_feature text, p_revoked_by text DEFAULT NULL)
RETURNS TABLE (tenant_id text, feature text, revoked boolean)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  DELETE FROM feature_grants g WHERE g.tenant_id = p_tenant_id AND g.feature = p_feature;
  IF FOUND THEN
    PERFORM audit_operator_event(p_tenant_id, 'feature.revoked', p_revoked_by, jsonb_build_object('feature', p_feature));
    RETURN QUERY SELECT p_tenant_id, p_feature, true;
  ELSE
    RETURN QUERY SELECT p_tenant_id, p_feature, false;
  END IF;
END $$;
COMMENT ON FUNCTION feature_revoke(text, text, text) IS
  'Withdraws a granted request-only feature and queues the audit event feature.revoked; revoked is false (and nothing is recorded) when there was no grant.';
