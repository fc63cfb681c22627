-- The decision hot path in fewer round trips (docs/performance.md):
-- receipt_append_batch() stores many decisions in one call and one commit (group commit); when an
-- item is refused (quota, already executed, ...) each item gets its own subtransaction, so one
-- item's refusal does not undo the others. Items are taken in tenant order, so batches of several
-- instances lock tenant heads in the same order and cannot deadlock.

-- One batch item (a jsonb object with receipt_append's arguments by name) through receipt_append().
CREATE FUNCTION receipt_append_item(p_item jsonb)
RETURNS TABLE (seq bigint, prev_hash text, chain_hash text, quota_limit integer, quota_used integer)
LANGUAGE sql AS $$
  SELECT a.seq, a.prev_hash, a.chain_hash, a.quota_limit, a.quota_used
  FROM receipt_append(p_item ->> 'receipt_id', p_item ->> 'tenant_id', p_item ->> 'key_id', p_item ->> 'kind',
                      p_item ->> 'request_id', p_item ->> 'timestamp', p_item ->> 'decision', p_item ->> 'payload',
                      p_item ->> 'content_hash', p_item ->> 'signature', p_item ->> 'protect_receipt_id') AS a
$$;

CREATE FUNCTION receipt_append_batch(p_items jsonb)
RETURNS TABLE (idx integer, seq bigint, prev_hash text, chain_hash text, quota_limit integer, quota_used integer,
               error_sqlstate text, error_constraint text, error_message text)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  it record;
  r record;
  v_constraint text;
  -- The fast path's answers, kept until the whole batch has gone in.
  v_idx integer[] := '{}';
  v_seq bigint[] := '{}';
  v_prev text[] := '{}';
  v_chain text[] := '{}';
  v_limit integer[] := '{}';
  v_used integer[] := '{}';
  v_fast boolean := true;
BEGIN
  -- Fast path: every item in one subtransaction (a subtransaction per item cost ~40% of the
  -- batch). Any refusal undoes the whole attempt, and the careful path below runs instead.
  BEGIN
    FOR it IN
      SELECT (e.ord - 1)::integer AS i, e.value AS v
      FROM jsonb_array_elements(p_items) WITH ORDINALITY AS e(value, ord)
      ORDER BY e.value ->> 'tenant_id', e.ord
    LOOP
      SELECT a.seq, a.prev_hash, a.chain_hash, a.quota_limit, a.quota_used INTO r FROM receipt_append_item(it.v) AS a;
      v_idx := v_idx || it.i;
      v_seq := v_seq || r.seq;
      v_prev := v_prev || r.prev_hash;
      v_chain := v_chain || r.chain_hash;
      v_limit := v_limit || r.quota_limit;
      v_used := v_used || r.quota_used;
    END LOOP;
  EXCEPTION WHEN OTHERS THEN
    v_fast := false;
  END;
  IF v_fast THEN
    RETURN QUERY
      SELECT u.i, u.s, u.p, u.c, u.l, u.q, NULL::text, NULL::text, NULL::text
      FROM unnest(v_idx, v_seq, v_prev, v_chain, v_limit, v_used) AS u(i, s, p, c, l, q);
    RETURN;
  END IF;

  -- Careful path: each item in its own subtransaction, so one refusal leaves the others stored.
  FOR it IN
    SELECT (e.ord - 1)::integer AS i, e.value AS v
    FROM jsonb_array_elements(p_items) WITH ORDINALITY AS e(value, ord)
    ORDER BY e.value ->> 'tenant_id', e.ord
  LOOP
    BEGIN
      SELECT a.seq, a.prev_hash, a.chain_hash, a.quota_limit, a.quota_used INTO r FROM receipt_append_item(it.v) AS a;
      RETURN QUERY SELECT it.i, r.seq, r.prev_hash, r.chain_hash, r.quota_limit, r.quota_used, NULL::text, NULL::text, NULL::text;
    EXCEPTION WHEN OTHERS THEN
      GET STACKED DIAGNOSTICS v_constraint = CONSTRAINT_NAME;
      RETURN QUERY SELECT it.i, NULL::bigint, NULL::text, NULL::text, NULL::integer, NULL::integer, SQLSTATE, nullif(v_constraint, ''), SQLERRM;
    END;
  END LOOP;
END $$;
COMMENT ON FUNCTION receipt_append_batch(jsonb) IS
  'receipt_append() for an array of items ({receipt_id, tenant_id, key_id, kind, request_id, timestamp, decision, payload, '
  'content_hash, signature, protect_receipt_id}) in one transaction; one result row per item (idx = its array position), '
  'with the SQLSTATE, constraint and message of its refusal instead of a receipt when it was refused.';

-- Everything a key-authenticated request needs, in one call: the key and its status, the tenant's
-- plan, its active policy version (NULL policy_id: the built-in default) and its verdicts for the
-- features keys call. PL/pgSQL keeps the plan of this query for the session: the embedded
-- database plans every ad-hoc statement anew, which cost ~2.5 ms here against ~0.4 ms.
-- last_used_at is written at most once a minute, so busy keys do not turn every request into a
-- row write; the row's own status is re-checked, so a revoke that commits meanwhile makes the
-- key read as revoked rather than tripping api_keys_guard.
CREATE FUNCTION api_key_context(p_secret_hash text)
RETURNS TABLE (key_id text, tenant_id text, status text, plan text,
               policy_id text, policy_version integer, policy_hash text, verdicts jsonb)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
  UPDATE api_keys k SET last_used_at = now()
  WHERE k.secret_hash = p_secret_hash AND k.status = 'active'
    AND (k.last_used_at IS NULL OR k.last_used_at < now() - interval '60 seconds');
  RETURN QUERY
    SELECT k.key_id, k.tenant_id, k.status, t.plan, p.policy_id, p.version, p.hash, v.verdicts
    FROM api_keys k
    JOIN tenants t ON t.tenant_id = k.tenant_id
    LEFT JOIN LATERAL (
      SELECT po.policy_id, po.version, po.hash FROM policies po WHERE po.tenant_id = k.tenant_id ORDER BY po.version DESC LIMIT 1
    ) p ON true
    LEFT JOIN LATERAL (
      SELECT jsonb_object_agg(f.feature, jsonb_build_object('verdict', fa.verdict, 'required_plan', fa.required_plan)) AS verdicts
      FROM features f CROSS JOIN LATERAL feature_access(k.tenant_id, f.feature) fa
      WHERE f.feature IN ('simulate', 'protect', 'execute')
    ) v ON true
    WHERE k.secret_hash = p_secret_hash;
END $$;
COMMENT ON FUNCTION api_key_context(text) IS
  'The key behind a secret hash with its tenant''s plan, active policy version and feature verdicts; touches last_used_at at most once a minute.';
