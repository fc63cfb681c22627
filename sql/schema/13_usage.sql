-- Usage limits in policies (docs/policy.md, "Budgets and rate windows"): a counter per usage rule,
-- scope (a key, or the tenant) and UTC window, kept as protects are appended, never by scanning the
-- log. Read and added to only under the tenant's locked log head (receipt_heads_lock()), so that a
-- limit holds exactly under any concurrency, across instances.
CREATE TABLE usage_counters (
  tenant_id     text NOT NULL REFERENCES tenants (tenant_id),
  counter       text NOT NULL CHECK (length(counter) BETWEEN 1 AND 200),
  scope         text NOT NULL CHECK (length(scope) BETWEEN 1 AND 100),
  window_start  timestamptz NOT NULL,
  total         numeric NOT NULL DEFAULT 0 CHECK (total >= 0),
  PRIMARY KEY (tenant_id, counter, scope, window_start)
);

CREATE FUNCTION usage_counters_guard() RETURNS trigger
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND (NEW.tenant_id, NEW.counter, NEW.scope, NEW.window_start) = (OLD.tenant_id, OLD.counter, OLD.scope, OLD.window_start)
     AND NEW.total >= OLD.total THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'usage counters only grow' USING ERRCODE = 'WB001';
END $$;
COMMENT ON FUNCTION usage_counters_guard() IS 'A usage counter only grows, and never moves to another tenant, rule, scope or window; none is deleted (WB001).';
CREATE TRIGGER usage_counters_guard BEFORE UPDATE OR DELETE ON usage_counters FOR EACH ROW EXECUTE FUNCTION usage_counters_guard();

-- The totals a batch of protects with usage rules decides on, read under the locked heads of their
-- tenants: the caller decides, signs and appends in the same transaction.
CREATE FUNCTION usage_read(p_tenants text[], p_keys json)
RETURNS TABLE (tenant_id text, counter text, scope text, window_start text, total numeric)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
  v_tenant text;
BEGIN
  PERFORM receipt_heads_lock(p_tenants);
  -- One statement per tenant, each naming it: on a Citus cluster each is its tenant's shard's.
  FOR v_tenant IN SELECT DISTINCT k.tenant_id FROM json_to_recordset(p_keys) AS k(tenant_id text) ORDER BY 1 LOOP
    RETURN QUERY
      SELECT v_tenant, k.counter, k.scope, k.window_start, coalesce(c.total, 0)
      FROM json_to_recordset(p_keys) AS k(tenant_id text, counter text, scope text, window_start text)
      LEFT JOIN usage_counters c ON c.tenant_id = v_tenant AND c.counter = k.counter AND c.scope = k.scope
                                AND c.window_start = k.window_start::timestamptz
      WHERE k.tenant_id = v_tenant;
  END LOOP;
END $$;
COMMENT ON FUNCTION usage_read(text[], json) IS
  'Locks the log heads of these tenants (receipt_heads_lock()) and answers the current total of each counter asked '
  '({tenant_id, counter, scope, window_start}), 0 when none: call it in the transaction that then appends the decisions made on them.';

-- The piece of receipt_append() that keeps a decision on usage exact: an item names each counter
-- its decision read, the total it read and what it adds when stored ALLOWED (usage: [{counter,
-- scope, window_start, before, add}]); the service may have taken the totals from what it last
-- knew rather than from a read under the lock. Under the tenant's locked head each must equal the
-- counter as stored plus what the tenant's earlier accepted ALLOWED items of the call add; the
-- first that does not, and every later item of its tenant that read usage, is refused (WB002) and
-- decided again by the service. Compared in float8, the number the decision compared: the exact
-- total rounded once, as the service rounds its own exact sum (src/decide/decimal.ts). Linear in
-- the call's items: one running sum per counter, one probe per counter.
CREATE FUNCTION receipt_usage_rules(p_tenant text, p_items receipt_append_item[], p_recheck boolean) RETURNS receipt_append_item[]
LANGUAGE plpgsql STABLE AS $$
DECLARE
  v record;
BEGIN
  -- The check again after the quota and approval rules only when they refused an addition that a
  -- later item may have counted on; most calls read no usage at all.
  IF NOT EXISTS (
    SELECT 1 FROM unnest(p_items) AS i
    WHERE i.usage IS NOT NULL
      AND CASE WHEN p_recheck THEN i.refusal IS NOT NULL AND i.refusal <> 'WB002' AND i.decision = 'ALLOWED' ELSE i.refusal IS NULL END
  ) THEN
    RETURN p_items;
  END IF;
  FOR v IN
    WITH reads AS (
      SELECT i.idx, i.tenant_id, u.counter, u.scope, u.window_start::timestamptz AS window_start, u.before,
             CASE WHEN i.kind = 'protect' AND i.decision = 'ALLOWED' THEN u.add ELSE 0 END AS add
      FROM unnest(p_items) AS i
      CROSS JOIN LATERAL json_to_recordset(i.usage) AS u(counter text, scope text, window_start text, before float8, add numeric)
      WHERE i.refusal IS NULL AND i.usage IS NOT NULL
    ), running AS (
      SELECT r.*, coalesce(sum(r.add) OVER (PARTITION BY r.tenant_id, r.counter, r.scope, r.window_start ORDER BY r.idx
                                            ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS earlier
      FROM reads r
    ), stored AS (
      SELECT k.tenant_id, k.counter, k.scope, k.window_start, coalesce(c.total, 0) AS total
      FROM (SELECT DISTINCT r.tenant_id, r.counter, r.scope, r.window_start FROM reads r) k
      LEFT JOIN LATERAL (
        SELECT c.total FROM usage_counters c
        WHERE c.tenant_id = coalesce(p_tenant, k.tenant_id) AND c.counter = k.counter AND c.scope = k.scope AND c.window_start = k.window_start
        LIMIT 1
      ) c ON true
    ), stale AS (
      SELECT r.tenant_id, min(r.idx) AS first
      FROM running r
      JOIN stored s ON s.tenant_id = r.tenant_id AND s.counter = r.counter AND s.scope = r.scope AND s.window_start = r.window_start
      WHERE r.before IS DISTINCT FROM (s.total + r.earlier)::float8
      GROUP BY r.tenant_id
    )
    SELECT i.idx
    FROM unnest(p_items) AS i JOIN stale s ON s.tenant_id = i.tenant_id
    WHERE i.refusal IS NULL AND i.usage IS NOT NULL AND i.idx >= s.first
  LOOP
    p_items[v.idx + 1].refusal := 'WB002';
  END LOOP;
  RETURN p_items;
END $$;
COMMENT ON FUNCTION receipt_usage_rules(text, receipt_append_item[], boolean) IS
  'The usage rules of receipt_append() (p_tenant: NULL, or the one tenant of the items): an item whose usage ([{counter, scope, window_start, before, add}]) does not match the counters '
  'under the locked head (the stored total plus the additions of its tenant''s earlier accepted ALLOWED items of the call, compared as float8) '
  'is refused (WB002), with every later item of its tenant that read usage. p_recheck: the second pass, after the quota and approval '
  'rules, which runs only when they refused an ALLOWED item that read usage. Other items are returned as they came.';

-- The piece of receipt_append() that counts: each stored ALLOWED protect adds to the counters its
-- item names (the usage rules whose other conditions its input satisfies).
CREATE FUNCTION receipt_usage_counters_add(p_tenant text, p_items receipt_append_item[]) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v record;
BEGIN
  -- Most batches name no usage rule: PL/pgSQL returns here, and keeps the INSERT's plan for the
  -- rest (a LANGUAGE sql function would plan its INSERT again at every call, every batch).
  IF NOT EXISTS (SELECT 1 FROM unnest(p_items) AS i WHERE i.usage IS NOT NULL AND i.refusal IS NULL AND i.decision = 'ALLOWED') THEN
    RETURN;
  END IF;
  IF p_tenant IS NULL THEN
    INSERT INTO usage_counters AS c (tenant_id, counter, scope, window_start, total)
    SELECT i.tenant_id, u.counter, u.scope, u.window_start::timestamptz, sum(u.add)
    FROM unnest(p_items) AS i
    CROSS JOIN LATERAL json_to_recordset(i.usage) AS u(counter text, scope text, window_start text, add numeric)
    WHERE i.refusal IS NULL AND i.kind = 'protect' AND i.decision = 'ALLOWED' AND i.usage IS NOT NULL
    GROUP BY i.tenant_id, u.counter, u.scope, u.window_start
    ORDER BY 1, 2, 3, 4
    ON CONFLICT (tenant_id, counter, scope, window_start) DO UPDATE SET total = c.total + excluded.total;
    RETURN;
  END IF;
  -- One tenant (a cluster): one counter per statement, which Citus routes to the tenant's shard.
  FOR v IN
    SELECT u.counter, u.scope, u.window_start::timestamptz AS window_start, sum(u.add) AS total
    FROM unnest(p_items) AS i
    CROSS JOIN LATERAL json_to_recordset(i.usage) AS u(counter text, scope text, window_start text, add numeric)
    WHERE i.refusal IS NULL AND i.kind = 'protect' AND i.decision = 'ALLOWED' AND i.usage IS NOT NULL
    GROUP BY u.counter, u.scope, u.window_start
    ORDER BY 1, 2, 3
  LOOP
    INSERT INTO usage_counters AS c (tenant_id, counter, scope, window_start, total)
    VALUES (p_tenant, v.counter, v.scope, v.window_start, v.total)
    ON CONFLICT (tenant_id, counter, scope, window_start) DO UPDATE SET total = c.total + excluded.total;
  END LOOP;
END $$;
COMMENT ON FUNCTION receipt_usage_counters_add(text, receipt_append_item[]) IS
  'After receipt_append() stored its items (p_tenant: NULL, or the one tenant of the items): each stored ALLOWED protect adds to the usage '
  'counters its item names (usage: [{counter, scope, window_start, before, add}]). Refused items count toward nothing.';

-- What GET /customer/usage shows: a tenant's counters of the current windows.
CREATE INDEX usage_counters_recent ON usage_counters (tenant_id, window_start DESC);
