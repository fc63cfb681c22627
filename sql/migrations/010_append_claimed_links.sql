-- Receipt batches at a lower cost per receipt (docs/performance.md section 14). Timed on a batch of
-- 200 receipts of 16 tenants, inside receipt_append_batch(): parsing the jsonb argument ~22 us a
-- receipt, the PL/pgSQL pass that computes the links ~30 us, the foreign key to api_keys ~13 us
-- (one SPI query and row lock per receipt), the quota upsert once per tenant ~10 us.
--
-- 1. Items arrive as json, parsed once into an array of a row type (jsonb was parsed into a tree,
--    then expanded again by jsonb_array_elements() in every statement).
-- 2. The writer may claim each item's link (seq, prev_hash, chain_hash): the service knows each
--    tenant's head from the answer to its previous batch (src/receipts/batcher.ts). The claims are
--    taken only when every item has one and each tenant's first claim continues its locked head;
--    otherwise the links are computed here, as before. Either way receipts_chain_check() checks
--    every link against the head and recomputes every chain_hash (WR005), so a wrong claim costs
--    a retry, never a broken chain.
-- 3. The daily quotas: one upsert for every tenant and day of the batch, checked against the plan
--    after (the rows are locked by then); any refusal sends the batch down the careful path.
-- 4. The two foreign keys of receipts (to the key, and an execute's to its protect receipt) were
--    checked one row at a time; they are now checked by the statement trigger for all new rows at
--    once. Keys and receipts are never deleted (api_keys_guard, receipts_append_only) and their
--    identity columns never change, so the check at insert is the whole guarantee. Same SQLSTATE
--    (23503) and constraint names as before.
-- 5. Two indexes less per receipt (below).
-- 6. Per-tenant reads (heads, plans, counters) are written as index probes (LATERAL ... LIMIT 1),
--    so that a generic plan made while a table was small cannot turn into a scan of it.

CREATE TYPE receipt_batch_item AS (
  receipt_id text, tenant_id text, key_id text, kind text, request_id text, "timestamp" text, decision text,
  payload text, content_hash text, signature text, protect_receipt_id text,
  -- The link the writer claims (all three, or none).
  seq bigint, prev_hash text, chain_hash text
);
COMMENT ON TYPE receipt_batch_item IS 'One decision of a receipt_append_batch() call, with the link its writer claims (optional).';

ALTER TABLE receipts DROP CONSTRAINT receipts_key_fkey;
ALTER TABLE receipts DROP CONSTRAINT receipts_protect_receipt_fkey;

-- Two of the four unique indexes every receipt paid for: (tenant_id, receipt_id) only served the
-- foreign key just dropped (receipt_id alone is the primary key), and receipts_execute_once also
-- indexed the NULL of every protect. It becomes a partial unique index over executes: same name,
-- so the same error (23505, receipts_execute_once) for a second execute.
ALTER TABLE receipts DROP CONSTRAINT receipts_tenant_receipt_key;
ALTER TABLE receipts DROP CONSTRAINT receipts_execute_once;
CREATE UNIQUE INDEX receipts_execute_once ON receipts (protect_receipt_id) WHERE protect_receipt_id IS NOT NULL;

-- Without the (tenant_id, receipt_id) index, a plan for "tenant_id = $1 AND receipt_id = $2" made
-- while receipts was empty (a new database; generic plans, PGlite's one session) may pick the
-- (tenant_id, seq) index and filter on receipt_id, reading all of a tenant's receipts. Lookups
-- by id therefore go by receipt_id alone, the primary key, and compare the tenant after:
-- receipt_append() below (its execute check, otherwise unchanged) and queries/receipts/get.sql.
CREATE OR REPLACE FUNCTION receipt_append(
  p_receipt_id text, p_tenant_id text, p_key_id text, p_kind text, p_request_id text, p_timestamp text,
  p_decision text, p_payload text, p_content_hash text, p_signature text, p_protect_receipt_id text
) RETURNS TABLE (seq bigint, prev_hash text, chain_hash text, quota_limit integer, quota_used integer)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
DECLARE
  v_ts timestamptz := p_timestamp::timestamptz;
  v_size bigint;
  v_head text;
  v_stored_limit integer;
  v_protect receipts%ROWTYPE;
  v_quota record;
BEGIN
  -- The signed timestamp text must be exactly what iso_time() gives back, or the chain (which
  -- hashes iso_time(issued_at)) would not match the signature.
  IF iso_time(v_ts) <> p_timestamp THEN
    RAISE EXCEPTION 'timestamp % is not in the canonical form', p_timestamp USING ERRCODE = '22007';
  END IF;
  -- Take this tenant's turn first, so the checks below see every earlier append.
  SELECT h.tree_size, h.head_hash INTO v_size, v_head FROM receipt_heads h WHERE h.tenant_id = p_tenant_id FOR UPDATE;
  IF NOT FOUND THEN
    INSERT INTO receipt_heads (tenant_id) VALUES (p_tenant_id) ON CONFLICT DO NOTHING;
    SELECT h.tree_size, h.head_hash INTO v_size, v_head FROM receipt_heads h WHERE h.tenant_id = p_tenant_id FOR UPDATE;
  END IF;

  IF p_kind = 'execute' THEN
    -- By receipt_id alone (the primary key), the tenant compared after: see above.
    SELECT r.* INTO v_protect FROM receipts r WHERE r.receipt_id = p_protect_receipt_id;
    IF NOT FOUND OR v_protect.tenant_id <> p_tenant_id OR v_protect.kind <> 'protect' THEN
      RAISE EXCEPTION 'no protect receipt %', p_protect_receipt_id USING ERRCODE = 'WR002';
    END IF;
    IF v_protect.decision <> 'ALLOWED' THEN
      RAISE EXCEPTION 'protect receipt % was DENIED', p_protect_receipt_id USING ERRCODE = 'WR003';
    END IF;
    IF v_ts - v_protect.issued_at >= interval '15 minutes' THEN
      RAISE EXCEPTION 'protect receipt % is older than 15 minutes', p_protect_receipt_id USING ERRCODE = 'WR004';
    END IF;
    -- receipts_execute_once is what enforces this; checking first only puts "already executed"
    -- ahead of the quota checks below.
    IF EXISTS (SELECT 1 FROM receipts r WHERE r.protect_receipt_id = p_protect_receipt_id) THEN
      RAISE EXCEPTION 'protect receipt % was already executed', p_protect_receipt_id
        USING ERRCODE = 'unique_violation', CONSTRAINT = 'receipts_execute_once';
    END IF;
  END IF;

  -- Full storage outlasts the day, so it is reported before the daily quota.
  SELECT p.receipts_stored INTO v_stored_limit FROM tenants t JOIN plans p ON p.plan = t.plan WHERE t.tenant_id = p_tenant_id;
  IF v_stored_limit IS NOT NULL AND v_size >= v_stored_limit THEN
    RAISE EXCEPTION 'receipt storage of % is full', v_stored_limit USING ERRCODE = 'WQ003';
  END IF;
  SELECT * INTO v_quota FROM usage_consume(p_tenant_id, p_kind, (v_ts AT TIME ZONE 'UTC')::date);

  RETURN QUERY
    INSERT INTO receipts AS r (receipt_id, tenant_id, seq, kind, key_id, request_id, issued_at, decision, payload,
                               content_hash, signature, prev_hash, chain_hash, protect_receipt_id)
    VALUES (p_receipt_id, p_tenant_id, v_size, p_kind, p_key_id, p_request_id, v_ts, p_decision, p_payload,
            p_content_hash, p_signature, v_head, receipt_chain_hash(v_head, p_content_hash, p_request_id, p_timestamp, v_size),
            p_protect_receipt_id)
    RETURNING r.seq, r.prev_hash, r.chain_hash, v_quota.quota_limit, v_quota.quota_used;
END $$;

CREATE OR REPLACE FUNCTION receipts_chain_check() RETURNS trigger
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
BEGIN
  -- What the foreign keys checked: each receipt names a key of its own tenant, and each execute a
  -- receipt of its own tenant (whether that one is an ALLOWED protect is the writer's check).
  IF EXISTS (
    SELECT 1 FROM added a
    LEFT JOIN LATERAL (SELECT true AS found FROM api_keys k WHERE k.key_id = a.key_id AND k.tenant_id = a.tenant_id LIMIT 1) k ON true
    WHERE k.found IS NULL
  ) THEN
    RAISE EXCEPTION 'a receipt names a key that is not its tenant''s'
      USING ERRCODE = 'foreign_key_violation', CONSTRAINT = 'receipts_key_fkey';
  END IF;
  IF EXISTS (
    SELECT 1 FROM added a
    LEFT JOIN LATERAL (SELECT r.tenant_id FROM receipts r WHERE r.receipt_id = a.protect_receipt_id LIMIT 1) p ON true
    WHERE a.protect_receipt_id IS NOT NULL AND p.tenant_id IS DISTINCT FROM a.tenant_id
  ) THEN
    RAISE EXCEPTION 'an execute names a receipt that is not its tenant''s'
      USING ERRCODE = 'foreign_key_violation', CONSTRAINT = 'receipts_protect_receipt_fkey';
  END IF;
  -- Each tenant's head, created when missing and locked in tenant order (as every writer locks
  -- them). The new rows must be the next seqs of the head: (tenant_id, seq) is unique, so n rows
  -- from tree_size to tree_size + n - 1 are exactly the next n; the first must link to the head.
  INSERT INTO receipt_heads (tenant_id) SELECT DISTINCT a.tenant_id FROM added a ORDER BY 1 ON CONFLICT DO NOTHING;
  IF EXISTS (
    SELECT 1
    FROM (SELECT a.tenant_id, count(*) AS n, min(a.seq) AS lo, max(a.seq) AS hi, (array_agg(a.prev_hash ORDER BY a.seq))[1] AS first_prev
          FROM added a GROUP BY a.tenant_id ORDER BY a.tenant_id) g
    CROSS JOIN LATERAL (SELECT h.tree_size, h.head_hash FROM receipt_heads h WHERE h.tenant_id = g.tenant_id LIMIT 1 FOR UPDATE) h
    WHERE g.lo <> h.tree_size OR g.hi <> h.tree_size + g.n - 1 OR g.first_prev IS DISTINCT FROM h.head_hash
  ) THEN
    RAISE EXCEPTION 'receipts do not continue their tenant''s chain (seq or prev_hash)' USING ERRCODE = 'WR005';
  END IF;
  -- Every later row links to the one before it, and every chain_hash is the hash of its link.
  IF EXISTS (
    SELECT 1 FROM added a LEFT JOIN added b ON b.tenant_id = a.tenant_id AND b.seq = a.seq - 1
    WHERE (b.seq IS NOT NULL AND a.prev_hash IS DISTINCT FROM b.chain_hash)
       OR a.chain_hash <> receipt_chain_hash(a.prev_hash, a.content_hash, a.request_id, iso_time(a.issued_at), a.seq)
  ) THEN
    RAISE EXCEPTION 'receipts do not continue their chain (prev_hash or chain_hash)' USING ERRCODE = 'WR005';
  END IF;
  UPDATE receipt_heads h SET tree_size = h.tree_size + l.n, head_hash = l.chain_hash
  FROM (
    SELECT DISTINCT ON (a.tenant_id) a.tenant_id, a.chain_hash, count(*) OVER (PARTITION BY a.tenant_id) AS n
    FROM added a ORDER BY a.tenant_id, a.seq DESC
  ) l
  WHERE h.tenant_id = l.tenant_id;
  RETURN NULL;
END $$;

DROP FUNCTION receipt_append_batch(jsonb);

-- Many decisions in one call and one commit. Fast path, in one subtransaction: lock every head
-- of the batch in tenant order, check the executes' protect receipts, storage and the daily
-- quotas by the set, take the claimed links or compute them in one ordered pass (a tenant's items
-- in arrival order), and store everything with one INSERT. Any refusal (a full quota, an execute
-- that lost its race, ...) undoes the attempt, and the careful path gives each item its own
-- subtransaction and its own answer.
CREATE FUNCTION receipt_append_batch(p_items json)
RETURNS TABLE (idx integer, seq bigint, prev_hash text, chain_hash text, quota_limit integer, quota_used integer,
               error_sqlstate text, error_constraint text, error_message text)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
DECLARE
  v_items receipt_batch_item[];
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
  SELECT array_agg(ROW(x.receipt_id, x.tenant_id, x.key_id, x.kind, x.request_id, x."timestamp", x.decision, x.payload,
                       x.content_hash, x.signature, x.protect_receipt_id, x.seq, x.prev_hash, x.chain_hash)::receipt_batch_item
                   ORDER BY x.ord)
  INTO v_items
  FROM json_populate_recordset(NULL::receipt_batch_item, p_items) WITH ORDINALITY
       AS x(receipt_id, tenant_id, key_id, kind, request_id, "timestamp", decision, payload, content_hash, signature,
            protect_receipt_id, seq, prev_hash, chain_hash, ord);
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
