-- Receipt batches parsed once (docs/performance.md section 29).
--
-- On PostgreSQL a protect or execute decided under a key hint (migration 012) is appended by
-- receipt_append_batch_keyed(), which parsed its JSON argument five times over: once into
-- elements for receipt_items_stale(), three times more for the ->> of each element's tenant_id
-- and key_epoch (a json value is text, and each ->> parses it again), and once more inside
-- receipt_append_batch(). A receipt's item is ~1.2 kB of JSON (the payload as a string, the
-- signature), PostgreSQL 15 copies every character of every string it parses one at a time, and
-- under protect parsing was ~10-13% of the append session's CPU (perf on the backend). The check
-- alone cost ~0.45-0.65 ms a batch of 32 (15-20 us a receipt) in a loop in psql.
--
-- Now every batch is parsed once, by receipt_batch_parse(), into the items' row type with their
-- key_epoch alongside, and the work on the parsed items is receipt_append_items(), the body of
-- receipt_append_batch() as migration 010 made it, unchanged but for taking its items as an array.
-- receipt_append_batch(json) parses and calls it; receipt_append_batch_keyed(json) parses, checks
-- the epochs on the parsed items and calls it. What is stored and answered is what it was.

-- The append of a parsed batch (what receipt_append_batch() did after parsing, migration 010):
-- fast path in one subtransaction, careful path item by item on any refusal.
CREATE FUNCTION receipt_append_items(p_items receipt_batch_item[])
RETURNS TABLE (idx integer, seq bigint, prev_hash text, chain_hash text, quota_limit integer, quota_used integer,
               error_sqlstate text, error_constraint text, error_message text)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
DECLARE
  v_items receipt_batch_item[] := p_items;
  v_claimed boolean;
  v_over integer;
  it record;
  r record;
  v_constraint text;
  v_tenant text := NULL;
  v_size bigint;
  v_head text;
  v_fast boolean := true;
BEGIN
  IF v_items IS NULL THEN
    RETURN;
  END IF;

  BEGIN
    -- Every head of the batch, locked in tenant order (instances lock in the same order).
    INSERT INTO receipt_heads (tenant_id) SELECT DISTINCT i.tenant_id FROM unnest(v_items) AS i ORDER BY 1 ON CONFLICT DO NOTHING;
    PERFORM 1
    FROM (SELECT DISTINCT i.tenant_id FROM unnest(v_items) AS i ORDER BY 1) t
    CROSS JOIN LATERAL (SELECT 1 FROM receipt_heads h WHERE h.tenant_id = t.tenant_id LIMIT 1 FOR UPDATE) h;

    -- Executes: each must name an ALLOWED protect receipt of its own tenant, younger than 15
    -- minutes and never executed, and only once in the batch. Anything else goes the careful way,
    -- which gives each item its own answer (receipt_append()'s checks, in its order). One index
    -- probe per item (receipt_id alone names a receipt; the tenant is compared after).
    IF EXISTS (
      SELECT 1
      FROM unnest(v_items) AS i
      LEFT JOIN LATERAL (
        SELECT r.tenant_id, r.kind, r.decision, r.issued_at FROM receipts r WHERE r.receipt_id = i.protect_receipt_id LIMIT 1
      ) p ON true
      LEFT JOIN LATERAL (
        SELECT true AS executed FROM receipts x WHERE x.protect_receipt_id = i.protect_receipt_id LIMIT 1
      ) d ON true
      WHERE i.kind = 'execute'
        AND (p.tenant_id IS DISTINCT FROM i.tenant_id OR p.kind <> 'protect' OR p.decision <> 'ALLOWED'
             OR i."timestamp"::timestamptz - p.issued_at >= interval '15 minutes'
             OR d.executed)
    ) OR (
      SELECT count(*) <> count(DISTINCT i.protect_receipt_id) FROM unnest(v_items) AS i WHERE i.kind = 'execute'
    ) THEN
      RAISE EXCEPTION 'an execute of this batch is refused' USING ERRCODE = 'WR002';
    END IF;

    -- Storage for all of a tenant's items at once.
    IF EXISTS (
      SELECT 1
      FROM (SELECT i.tenant_id, count(*) AS n FROM unnest(v_items) AS i GROUP BY 1) c
      CROSS JOIN LATERAL (SELECT p.receipts_stored FROM tenants tn JOIN plans p ON p.plan = tn.plan WHERE tn.tenant_id = c.tenant_id LIMIT 1) l
      CROSS JOIN LATERAL (SELECT h.tree_size FROM receipt_heads h WHERE h.tenant_id = c.tenant_id LIMIT 1) h
      WHERE l.receipts_stored IS NOT NULL AND h.tree_size + c.n > l.receipts_stored
    ) THEN
      RAISE EXCEPTION 'receipt storage is full' USING ERRCODE = 'WQ003';
    END IF;

    -- Each day's counters, counted once per tenant and day (in that order, as every writer locks
    -- them), then compared with the plan: over a limit, the whole attempt is undone.
    WITH g AS (
      SELECT i.tenant_id, (i."timestamp"::timestamptz AT TIME ZONE 'UTC')::date AS day,
             (count(*) FILTER (WHERE i.kind = 'protect'))::integer AS np,
             (count(*) FILTER (WHERE i.kind = 'execute'))::integer AS ne
      FROM unnest(v_items) AS i GROUP BY 1, 2
    ), counted AS (
      INSERT INTO usage_daily AS u (tenant_id, day, protect_count, execute_count)
      SELECT g.tenant_id, g.day, g.np, g.ne FROM g ORDER BY g.tenant_id, g.day
      ON CONFLICT (tenant_id, day) DO UPDATE SET
        protect_count = u.protect_count + excluded.protect_count,
        execute_count = u.execute_count + excluded.execute_count
      RETURNING u.tenant_id, u.protect_count, u.execute_count
    )
    SELECT count(*) INTO v_over
    FROM counted c
    CROSS JOIN LATERAL (SELECT p.protect_per_day, p.execute_per_day FROM tenants tn JOIN plans p ON p.plan = tn.plan WHERE tn.tenant_id = c.tenant_id LIMIT 1) l
    WHERE c.protect_count > l.protect_per_day OR c.execute_count > l.execute_per_day;
    IF v_over > 0 THEN
      RAISE EXCEPTION 'a daily quota of this batch is reached' USING ERRCODE = 'WQ001';
    END IF;

    -- The links: the claimed ones when every item has one and each tenant's first claim
    -- continues its locked head; otherwise one ordered pass from each head.
    SELECT bool_and(f.seq IS NOT DISTINCT FROM h.tree_size AND f.prev_hash IS NOT DISTINCT FROM h.head_hash) INTO v_claimed
    FROM (SELECT DISTINCT ON (i.tenant_id) i.tenant_id, i.seq, i.prev_hash FROM unnest(v_items) WITH ORDINALITY AS i ORDER BY i.tenant_id, i.ordinality) f
    CROSS JOIN LATERAL (SELECT h.tree_size, h.head_hash FROM receipt_heads h WHERE h.tenant_id = f.tenant_id LIMIT 1) h;
    IF v_claimed THEN
      v_claimed := NOT EXISTS (SELECT 1 FROM unnest(v_items) AS i WHERE i.seq IS NULL OR i.chain_hash IS NULL);
    END IF;
    IF NOT v_claimed THEN
      FOR it IN
        SELECT i.ordinality::integer AS k, i.tenant_id, i.content_hash, i.request_id, i."timestamp" AS ts, h.tree_size, h.head_hash
        FROM unnest(v_items) WITH ORDINALITY AS i
        CROSS JOIN LATERAL (SELECT h.tree_size, h.head_hash FROM receipt_heads h WHERE h.tenant_id = i.tenant_id LIMIT 1) h
        ORDER BY i.tenant_id, i.ordinality
      LOOP
        IF v_tenant IS DISTINCT FROM it.tenant_id THEN
          v_tenant := it.tenant_id;
          v_size := it.tree_size;
          v_head := it.head_hash;
        END IF;
        -- The signed timestamp text must be what iso_time() gives back, or the chain (which
        -- hashes iso_time(issued_at)) would not match the signature.
        IF iso_time(it.ts::timestamptz) <> it.ts THEN
          RAISE EXCEPTION 'timestamp % is not in the canonical form', it.ts USING ERRCODE = '22007';
        END IF;
        v_items[it.k].seq := v_size;
        v_items[it.k].prev_hash := v_head;
        v_head := receipt_chain_hash(v_head, it.content_hash, it.request_id, it.ts, v_size);
        v_items[it.k].chain_hash := v_head;
        v_size := v_size + 1;
      END LOOP;
    END IF;

    -- One INSERT for the whole batch. With claimed links, a timestamp text that is not what
    -- iso_time() gives back makes a chain_hash that receipts_chain_check() refuses.
    INSERT INTO receipts (receipt_id, tenant_id, seq, kind, key_id, request_id, issued_at, decision, payload,
                          content_hash, signature, prev_hash, chain_hash, protect_receipt_id)
    SELECT i.receipt_id, i.tenant_id, i.seq, i.kind, i.key_id, i.request_id, i."timestamp"::timestamptz, i.decision, i.payload,
           i.content_hash, i.signature, i.prev_hash, i.chain_hash, i.protect_receipt_id
    FROM unnest(v_items) AS i;
  EXCEPTION WHEN OTHERS THEN
    v_fast := false;
  END;
  IF v_fast THEN
    -- Each item's quota_used is its place in its tenant's day for its kind (the counters, locked
    -- by this transaction, now include all of them).
    RETURN QUERY
      SELECT (i.ordinality - 1)::integer, i.seq, i.prev_hash, i.chain_hash, l.day_limit,
             (u.used - count(*) OVER (PARTITION BY i.tenant_id, d.day, i.kind)
                     + row_number() OVER (PARTITION BY i.tenant_id, d.day, i.kind ORDER BY i.ordinality))::integer,
             NULL::text, NULL::text, NULL::text
      FROM unnest(v_items) WITH ORDINALITY AS i
      CROSS JOIN LATERAL (SELECT (i."timestamp"::timestamptz AT TIME ZONE 'UTC')::date AS day) d
      CROSS JOIN LATERAL (
        SELECT CASE i.kind WHEN 'protect' THEN p.protect_per_day ELSE p.execute_per_day END AS day_limit
        FROM tenants tn JOIN plans p ON p.plan = tn.plan WHERE tn.tenant_id = i.tenant_id LIMIT 1
      ) l
      CROSS JOIN LATERAL (
        SELECT CASE i.kind WHEN 'protect' THEN c.protect_count ELSE c.execute_count END AS used
        FROM usage_daily c WHERE c.tenant_id = i.tenant_id AND c.day = d.day LIMIT 1
      ) u;
    RETURN;
  END IF;

  -- Careful path: each item in its own subtransaction, so one refusal leaves the others stored.
  FOR it IN
    SELECT (i.ordinality - 1)::integer AS k, to_jsonb(i) AS v
    FROM unnest(v_items) WITH ORDINALITY AS i
    ORDER BY i.tenant_id, i.ordinality
  LOOP
    BEGIN
      SELECT a.seq, a.prev_hash, a.chain_hash, a.quota_limit, a.quota_used INTO r FROM receipt_append_item(it.v) AS a;
      RETURN QUERY SELECT it.k, r.seq, r.prev_hash, r.chain_hash, r.quota_limit, r.quota_used, NULL::text, NULL::text, NULL::text;
    EXCEPTION WHEN OTHERS THEN
      GET STACKED DIAGNOSTICS v_constraint = CONSTRAINT_NAME;
      RETURN QUERY SELECT it.k, NULL::bigint, NULL::text, NULL::text, NULL::integer, NULL::integer, SQLSTATE, nullif(v_constraint, ''), SQLERRM;
    END;
  END LOOP;
END $$;

COMMENT ON FUNCTION receipt_append_items(receipt_batch_item[]) IS
  'Appends parsed items as one batch (fast path) or item by item (careful path); idx is the 0-based position in p_items.';

-- A batch's JSON argument parsed once, in order: each item as the row type the append takes, with
-- the key_epoch it may carry (migration 012). A SQL function, inlined where it is called.
CREATE FUNCTION receipt_batch_parse(p_items json)
RETURNS TABLE (ord bigint, item receipt_batch_item, key_epoch bigint)
LANGUAGE sql STABLE AS $$
  SELECT x.ord,
         ROW(x.receipt_id, x.tenant_id, x.key_id, x.kind, x.request_id, x."timestamp", x.decision, x.payload,
             x.content_hash, x.signature, x.protect_receipt_id, x.seq, x.prev_hash, x.chain_hash)::receipt_batch_item,
         x.key_epoch
  FROM ROWS FROM (json_to_recordset(p_items) AS (
         receipt_id text, tenant_id text, key_id text, kind text, request_id text, "timestamp" text, decision text,
         payload text, content_hash text, signature text, protect_receipt_id text, seq bigint, prev_hash text,
         chain_hash text, key_epoch bigint)) WITH ORDINALITY
       AS x(receipt_id, tenant_id, key_id, kind, request_id, "timestamp", decision, payload, content_hash, signature,
            protect_receipt_id, seq, prev_hash, chain_hash, key_epoch, ord)
$$;

-- Many decisions in one call and one commit: the items, parsed once, appended by receipt_append_items().
CREATE OR REPLACE FUNCTION receipt_append_batch(p_items json)
RETURNS TABLE (idx integer, seq bigint, prev_hash text, chain_hash text, quota_limit integer, quota_used integer,
               error_sqlstate text, error_constraint text, error_message text)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
DECLARE
  v_items receipt_batch_item[];
BEGIN
  SELECT array_agg(p.item ORDER BY p.ord) INTO v_items FROM receipt_batch_parse(p_items) p;
  RETURN QUERY SELECT a.idx, a.seq, a.prev_hash, a.chain_hash, a.quota_limit, a.quota_used, a.error_sqlstate, a.error_constraint, a.error_message
               FROM receipt_append_items(v_items) a;
END $$;

-- receipt_append_batch() for items that may carry a key_epoch (migration 012), parsed in the same
-- single pass: the stale ones are answered WR006 and left out, the others appended as one batch,
-- in the same transaction.
CREATE OR REPLACE FUNCTION receipt_append_batch_keyed(p_items json)
RETURNS TABLE (idx integer, seq bigint, prev_hash text, chain_hash text, quota_limit integer, quota_used integer,
               error_sqlstate text, error_constraint text, error_message text)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
DECLARE
  v_items receipt_batch_item[];
  v_epochs bigint[];
  v_stale integer[];
BEGIN
  SELECT array_agg(p.item ORDER BY p.ord), array_agg(p.key_epoch ORDER BY p.ord) INTO v_items, v_epochs
  FROM receipt_batch_parse(p_items) p;
  IF v_items IS NULL THEN
    RETURN;
  END IF;
  -- The 0-based positions of the items decided under a context whose tenant's epoch has moved
  -- since (items without key_epoch were decided under a context read for their own request).
  SELECT coalesce(array_agg((i.ord - 1)::integer ORDER BY i.ord), '{}') INTO v_stale
  FROM unnest(v_items, v_epochs) WITH ORDINALITY AS i(receipt_id, tenant_id, key_id, kind, request_id, "timestamp", decision,
         payload, content_hash, signature, protect_receipt_id, seq, prev_hash, chain_hash, key_epoch, ord)
  LEFT JOIN LATERAL (SELECT t.key_context_epoch FROM tenants t WHERE t.tenant_id = i.tenant_id LIMIT 1) t ON true
  WHERE i.key_epoch IS NOT NULL
    AND t.key_context_epoch IS DISTINCT FROM i.key_epoch;
  IF cardinality(v_stale) = 0 THEN
    RETURN QUERY SELECT a.idx, a.seq, a.prev_hash, a.chain_hash, a.quota_limit, a.quota_used, a.error_sqlstate, a.error_constraint, a.error_message
                 FROM receipt_append_items(v_items) a;
    RETURN;
  END IF;
  RETURN QUERY
    SELECT s, NULL::bigint, NULL::text, NULL::text, NULL::integer, NULL::integer,
           'WR006'::text, NULL::text, 'the key context this item was decided under has changed'::text
    FROM unnest(v_stale) AS s;
  -- The rest keep their order. Their claimed links may now skip a stale item, which costs
  -- receipt_append_items() its careful path, never a wrong link.
  RETURN QUERY
    WITH kept AS (
      SELECT (g.n - 1)::integer AS orig, (row_number() OVER (ORDER BY g.n) - 1)::integer AS k
      FROM generate_subscripts(v_items, 1) AS g(n)
      WHERE (g.n - 1)::integer <> ALL (v_stale)
    )
    SELECT kept.orig, a.seq, a.prev_hash, a.chain_hash, a.quota_limit, a.quota_used, a.error_sqlstate, a.error_constraint, a.error_message
    FROM receipt_append_items((SELECT array_agg(v_items[kept.orig + 1] ORDER BY kept.k) FROM kept)) a
    JOIN kept ON kept.k = a.idx;
END $$;
