-- The key lookup at less than half its cost (docs/performance.md section 16). Timed with pgbench
-- on a batch of 16 keys (prepared, generic plans): 0.75-1.16 ms a call, of which ~0.1 ms finds the
-- keys, tenants and policies; the rest made the three feature verdicts of each key:
-- feature_access() inlined per key and feature (a hash of `features` built again for every key),
-- then a jsonb object of jsonb objects per key. Now 0.37-0.41 ms:
--
-- 1. The rule itself moves to feature_verdict(), which feature_access() and api_key_contexts()
--    both call, so the catalog, the checks and the key lookup still cannot disagree.
-- 2. api_key_contexts() reads the features keys call (with their plans' ranks) once per call, and
--    returns each key's verdicts as arrays aligned with `features`, not as jsonb.

-- Whether a tenant on a plan of rank p_tenant_rank may use a feature: allowed, plan_required (its
-- plan ranks below the feature's required plan) or feature_not_granted (request-only, and
-- p_granted false). Callers pass the grant lookup itself as p_granted: the function is inlined
-- (a function with a subquery in its body would not be), and the lookup then runs only for
-- request-only features of plans that rank high enough.
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

-- Same signature and answers as in migration 002; the rule is feature_verdict()'s.
CREATE OR REPLACE FUNCTION feature_access(p_tenant_id text, p_feature text)
RETURNS TABLE (verdict text, required_plan text, access_mode text)
LANGUAGE sql STABLE AS $$
  SELECT feature_verdict(tp.rank, rp.rank, f.access_mode,
                         EXISTS (SELECT 1 FROM feature_grants g WHERE g.tenant_id = t.tenant_id AND g.feature = f.feature)),
         f.required_plan, f.access_mode
  FROM features f
  JOIN tenants t ON t.tenant_id = p_tenant_id
  JOIN plans tp ON tp.plan = t.plan
  JOIN plans rp ON rp.plan = f.required_plan
  WHERE f.feature = p_feature
$$;

-- The result's shape changes (verdicts as arrays), so the function is made anew; everything else
-- is as in migration 008: last_used_at written at most once a minute on rows no one else holds,
-- then the read, a later statement that sees a revoke committed meanwhile.
DROP FUNCTION api_key_contexts(jsonb);
CREATE FUNCTION api_key_contexts(p_secret_hashes jsonb)
RETURNS TABLE (secret_hash text, key_id text, tenant_id text, status text, plan text,
               policy_id text, policy_version integer, policy_hash text,
               features text[], verdicts text[], required_plans text[])
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
DECLARE
  v_hashes text[] := ARRAY(SELECT DISTINCT h FROM jsonb_array_elements_text(p_secret_hashes) AS h);
BEGIN
  IF EXISTS (SELECT 1 FROM api_keys s WHERE s.secret_hash = ANY (v_hashes) AND s.status = 'active'
             AND (s.last_used_at IS NULL OR s.last_used_at < now() - interval '60 seconds')) THEN
    UPDATE api_keys k SET last_used_at = now()
    WHERE k.key_id IN (
      SELECT s.key_id FROM api_keys s
      WHERE s.secret_hash = ANY (v_hashes) AND s.status = 'active'
        AND (s.last_used_at IS NULL OR s.last_used_at < now() - interval '60 seconds')
      FOR UPDATE SKIP LOCKED)
    AND k.status = 'active';
  END IF;
  RETURN QUERY
    WITH called AS MATERIALIZED (
      -- The features keys call, each with its required plan's rank: read once per call.
      SELECT f.feature, f.required_plan, f.access_mode, rp.rank
      FROM features f JOIN plans rp ON rp.plan = f.required_plan
      WHERE f.feature IN ('simulate', 'protect', 'execute')
    )
    SELECT k.secret_hash, k.key_id, k.tenant_id, k.status, t.plan, p.policy_id, p.version, p.hash,
           ARRAY(SELECT c.feature FROM called c ORDER BY c.feature),
           ARRAY(SELECT feature_verdict(tp.rank, c.rank, c.access_mode,
                                        EXISTS (SELECT 1 FROM feature_grants g WHERE g.tenant_id = k.tenant_id AND g.feature = c.feature))
                 FROM called c ORDER BY c.feature),
           ARRAY(SELECT c.required_plan FROM called c ORDER BY c.feature)
    FROM api_keys k
    JOIN tenants t ON t.tenant_id = k.tenant_id
    JOIN plans tp ON tp.plan = t.plan
    LEFT JOIN LATERAL (
      SELECT po.policy_id, po.version, po.hash FROM policies po WHERE po.tenant_id = k.tenant_id ORDER BY po.version DESC LIMIT 1
    ) p ON true
    WHERE k.secret_hash = ANY (v_hashes);
END $$;
COMMENT ON FUNCTION api_key_contexts(jsonb) IS
  'For a JSON array of secret hashes: each matching key with its tenant''s plan, active policy version and its verdicts for '
  'the features keys call (arrays aligned with features); touches last_used_at at most once a minute, never waiting on a locked key row.';
