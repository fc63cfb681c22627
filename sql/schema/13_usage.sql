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
LANGUAGE plpgsql AS $$
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
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
  PERFORM receipt_heads_lock(p_tenants);
  RETURN QUERY
    SELECT k.tenant_id, k.counter, k.scope, k.window_start, coalesce(c.total, 0)
    FROM json_to_recordset(p_keys) AS k(tenant_id text, counter text, scope text, window_start text)
    LEFT JOIN usage_counters c ON c.tenant_id = k.tenant_id AND c.counter = k.counter AND c.scope = k.scope
                              AND c.window_start = k.window_start::timestamptz;
END $$;
COMMENT ON FUNCTION usage_read(text[], json) IS
  'Locks the log heads of these tenants (receipt_heads_lock()) and answers the current total of each counter asked '
  '({tenant_id, counter, scope, window_start}), 0 when none: call it in the transaction that then appends the decisions made on them.';

-- The piece of receipt_append() that counts: each stored ALLOWED protect adds to the counters its
-- item names (the usage rules whose other conditions its input satisfies).
CREATE FUNCTION receipt_usage_counters_add(p_items receipt_append_item[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  -- Most batches name no usage rule: PL/pgSQL returns here, and keeps the INSERT's plan for the
  -- rest (a LANGUAGE sql function would plan its INSERT again at every call, every batch).
  IF NOT EXISTS (SELECT 1 FROM unnest(p_items) AS i WHERE i.usage_add IS NOT NULL) THEN
    RETURN;
  END IF;
  INSERT INTO usage_counters AS c (tenant_id, counter, scope, window_start, total)
  SELECT i.tenant_id, u.counter, u.scope, u.window_start::timestamptz, sum(u.add)
  FROM unnest(p_items) AS i
  CROSS JOIN LATERAL json_to_recordset(i.usage_add) AS u(counter text, scope text, window_start text, add numeric)
  WHERE i.refusal IS NULL AND i.kind = 'protect' AND i.decision = 'ALLOWED' AND i.usage_add IS NOT NULL
  GROUP BY i.tenant_id, u.counter, u.scope, u.window_start
  ORDER BY 1, 2, 3, 4
  ON CONFLICT (tenant_id, counter, scope, window_start) DO UPDATE SET total = c.total + excluded.total;
END $$;
COMMENT ON FUNCTION receipt_usage_counters_add(receipt_append_item[]) IS
  'After receipt_append() stored its items: each stored ALLOWED protect adds to the usage counters its item names '
  '(usage_add: [{counter, scope, window_start, add}]). Refused items count toward nothing.';

-- What GET /customer/usage shows: a tenant's counters of the current windows.
CREATE INDEX usage_counters_recent ON usage_counters (tenant_id, window_start DESC);
