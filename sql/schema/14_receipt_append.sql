-- Appending decisions: receipt_append(), the pipeline of named pieces over a batch's items. It is
-- defined after every file that defines one of its pieces (08_receipts.sql: parse, lock, execute
-- and quota rules, link, day counts; 12_approvals.sql: approval rules; 13_usage.sql: usage rules
-- and counters), so a reader meets each piece before the pipeline that runs them.

-- The pipeline over a call's items: p_tenant NULL on one server (each statement serves every tenant
-- of the call), or the one tenant of the items (receipt_items_of()) on a Citus cluster, where every
-- statement of the pieces names it, so that each runs on that tenant's shard (docs/scaling.md).
CREATE FUNCTION receipt_append_run(p_tenant text, p_items receipt_append_item[]) RETURNS receipt_append_item[]
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_items receipt_append_item[] := p_items;
  v_tenants text[];
  v_executes boolean;
  v_usage boolean;
  v_approvals boolean;
BEGIN
  -- What the call holds, in one statement: a piece with nothing of its kind to see is not called
  -- (each would find that out with a statement of its own, and most calls are protects alone).
  SELECT array_agg(i.tenant_id), bool_or(i.kind = 'execute'), bool_or(i.usage IS NOT NULL), bool_or(i.approval IS NOT NULL)
  INTO v_tenants, v_executes, v_usage, v_approvals
  FROM unnest(p_items) AS i;
  -- Locked before the rules read anything, so they see every earlier append of these tenants.
  PERFORM receipt_heads_lock(v_tenants);
  IF v_executes THEN
    v_items := receipt_execute_rules(p_tenant, v_items);
  END IF;
  -- Before the quota, so that a decision made on stale usage counts toward nothing; again after
  -- the quota and approval rules, which may refuse an item whose addition a later one counted on.
  IF v_usage THEN
    v_items := receipt_usage_rules(p_tenant, v_items, false);
  END IF;
  v_items := receipt_quota_rules(p_tenant, v_items);
  IF v_approvals THEN
    v_items := receipt_approval_rules(p_tenant, v_items);
  END IF;
  IF v_usage THEN
    v_items := receipt_usage_rules(p_tenant, v_items, true);
  END IF;
  IF v_executes THEN
    v_items := receipt_execute_rules_after(v_items);
  END IF;
  v_items := receipt_link(p_tenant, v_items);

  -- Checks the keys, moves the heads, inserts the accepted items and grows the stored tree.
  PERFORM receipt_log_store(p_tenant, v_items);
  PERFORM receipt_usage_add(p_tenant, v_items);
  IF v_usage THEN
    PERFORM receipt_usage_counters_add(p_tenant, v_items);
  END IF;
  IF v_approvals THEN
    PERFORM receipt_approval_open(p_tenant, v_items);
  END IF;
  IF v_executes THEN
    PERFORM receipt_approval_executed(p_tenant, v_items);
  END IF;
  RETURN v_items;
END $$;
COMMENT ON FUNCTION receipt_append_run(text, receipt_append_item[]) IS
  'receipt_append()''s pipeline over a call''s items (idx from 0; p_tenant: NULL, or the one tenant of the items): locks their heads, sets each item''s first refusal (execute, usage, '
  'quota, approval, usage again), links the accepted ones, stores them and counts them; returns the items with what it decided.';

CREATE FUNCTION receipt_append(p_items json)
RETURNS TABLE (idx integer, seq bigint, prev_hash text, chain_hash text, quota_limit integer, quota_used integer, refusal text, approval json)
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off AS $$
#variable_conflict use_column
DECLARE
  v_items receipt_append_item[] := receipt_append_parse(p_items);
  v_tenant text;
BEGIN
  IF v_items IS NULL THEN
    RETURN;
  END IF;
  IF NOT receipt_append_by_tenant() THEN
    v_items := receipt_append_run(NULL, v_items);
  ELSE
    -- A cluster: one tenant at a time, in tenant order, the order every writer of the log locks heads in.
    FOR v_tenant IN SELECT DISTINCT i.tenant_id FROM unnest(v_items) AS i ORDER BY 1 LOOP
      v_items := receipt_items_put(v_items, v_tenant, receipt_append_run(v_tenant, receipt_items_of(v_items, v_tenant)));
    END LOOP;
  END IF;

  RETURN QUERY
    SELECT i.idx, i.seq, i.prev_hash, i.chain_hash, i.quota_limit, i.quota_used, i.refusal,
           CASE WHEN (i.approval ->> 'answered')::boolean THEN i.approval END
    FROM unnest(v_items) AS i
    ORDER BY i.idx;
END $$;
COMMENT ON FUNCTION receipt_append(json) IS
  'Stores a JSON array of decisions ({receipt_id, tenant_id, key_id, kind, request_id, timestamp, decision, payload, content_hash, '
  'signature, protect_receipt_id, approval, usage}) as their tenants'' next receipts, in input order, and counts them against the plans; one row per item '
  '(idx 0-based; approval: the approval a retry answers, receipt_approval_rules()). The items go through receipt_append_run(): all at '
  'once on one server, each tenant''s in turn, tenants in order, on a cluster (receipt_append_by_tenant()). Per item, first refusal wins: receipt_execute_rules() (WR002, WR003, WR004, WR007, WR010, WR011), then receipt_usage_rules() (WB002), then receipt_quota_rules() '
  '(WQ003, then WQ001 or WQ002), then receipt_approval_rules() (WQ004), then receipt_usage_rules() again (WB002); stored protects with approval terms open their approvals '
  '(receipt_approval_open()) and executes of outcomes mark them executed (receipt_approval_executed()). Refused items are not stored and count towards nothing. Raises 22007 for a timestamp not in iso_time() '
  'form, 22023 for a kind other than protect or execute (receipt_append_parse()). Agrees with appending the items one by one, '
  'except that an execute never finds a protect receipt of the same call (WR002), and that a second execute of one protect '
  'receipt is WR007 even when the first was refused for storage or quota.';

-- receipt_append() for the items of one tenant, named: on a Citus cluster this function is
-- distributed by p_tenant_id (sql/citus/distribute.sql), so that a call of it runs whole on that
-- tenant's worker, one shard's transaction. (Citus delegates by the argument's value, so it has no
-- NULL to take: a batch of several tenants calls receipt_append() itself.)
CREATE FUNCTION receipt_append_tenant(p_tenant_id text, p_items json)
RETURNS TABLE (idx integer, seq bigint, prev_hash text, chain_hash text, quota_limit integer, quota_used integer, refusal text, approval json)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM json_to_recordset(p_items) AS x(tenant_id text) WHERE x.tenant_id IS DISTINCT FROM p_tenant_id) THEN
    RAISE EXCEPTION 'receipt_append_tenant() for tenant % got an item of another tenant', p_tenant_id USING ERRCODE = '22023';
  END IF;
  RETURN QUERY SELECT a.idx, a.seq, a.prev_hash, a.chain_hash, a.quota_limit, a.quota_used, a.refusal, a.approval FROM receipt_append(p_items) AS a;
END $$;
COMMENT ON FUNCTION receipt_append_tenant(text, json) IS
  'receipt_append() of items that are all of tenant p_tenant_id (22023 otherwise); on a Citus cluster the call runs on that tenant''s worker.';
