-- Receipt appends by the set (docs/performance.md). New error code:
--   WR005 receipts do not continue their tenant's chain (seq, prev_hash or chain_hash)
--
-- Before: a BEFORE INSERT row trigger assigned seq, prev_hash and chain_hash from the tenant's
-- head and advanced the head, one row at a time (a head row update per receipt, each one longer
-- to find within a transaction). Now the writer computes them under the head lock, and an AFTER
-- INSERT statement trigger checks every inserted row against the head in a few set-based
-- statements and advances each tenant's head once. The guarantee is the same for every writer: a
-- receipt is stored only as the next link of its tenant's chain. A writer that claims anything
-- else is refused (before, its claims were overwritten).

DROP TRIGGER receipt_chain_append ON receipts;
DROP FUNCTION receipt_chain_append();

-- receipts.tenant_id -> tenants is implied by (tenant_id, key_id) -> api_keys, whose tenant_id
-- references tenants: one check per receipt less.
ALTER TABLE receipts DROP CONSTRAINT receipts_tenant_id_fkey;

-- These three only call stable functions (convert_to, to_json, to_char with a time zone), so
-- PostgreSQL would not inline them while they claimed to be immutable: every call went through
-- the SQL-function executor (~9 us for sha256_hex, four times per receipt). Declared stable, they
-- are inlined into the statements that use them.
ALTER FUNCTION sha256_hex(text) STABLE;
ALTER FUNCTION iso_time(timestamptz) STABLE;
ALTER FUNCTION receipt_chain_hash(text, text, text, text, bigint) STABLE;

-- The same shapes, checked ~5x cheaper: PostgreSQL's regex engine is slow on bounded
-- repetition ({1,128}: 27 us a row, {64}: 14 us), which made these checks half of the cost of
-- storing a receipt. An unbounded class plus a length test accepts exactly the same strings
-- (every character allowed is ASCII, so characters are bytes). Same names, same meaning.
ALTER TABLE receipts
  DROP CONSTRAINT receipts_request_id_check,
  DROP CONSTRAINT receipts_prev_hash_check,
  DROP CONSTRAINT receipts_chain_hash_check,
  DROP CONSTRAINT receipts_receipt_id_check,
  ADD CONSTRAINT receipts_request_id_check CHECK (length(request_id) BETWEEN 1 AND 128 AND request_id ~ '^[\x21-\x7e]+$') NOT VALID,
  ADD CONSTRAINT receipts_prev_hash_check CHECK (length(prev_hash) = 66 AND prev_hash ~ '^0x[0-9a-f]+$') NOT VALID,
  ADD CONSTRAINT receipts_chain_hash_check CHECK (length(chain_hash) = 66 AND chain_hash ~ '^0x[0-9a-f]+$') NOT VALID,
  ADD CONSTRAINT receipts_receipt_id_check CHECK (length(receipt_id) = 27 AND receipt_id ~ '^rcpt_[0-9A-Za-z]+$') NOT VALID;
ALTER TABLE receipts VALIDATE CONSTRAINT receipts_request_id_check;
ALTER TABLE receipts VALIDATE CONSTRAINT receipts_prev_hash_check;
ALTER TABLE receipts VALIDATE CONSTRAINT receipts_chain_hash_check;
ALTER TABLE receipts VALIDATE CONSTRAINT receipts_receipt_id_check;
ALTER TABLE receipt_heads
  DROP CONSTRAINT receipt_heads_head_hash_check,
  ADD CONSTRAINT receipt_heads_head_hash_check CHECK (length(head_hash) = 66 AND head_hash ~ '^0x[0-9a-f]+$') NOT VALID;
ALTER TABLE receipt_heads VALIDATE CONSTRAINT receipt_heads_head_hash_check;

CREATE FUNCTION receipts_chain_check() RETURNS trigger
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
BEGIN
  -- Each tenant's head, created when missing and locked in tenant order (as every writer locks
  -- them). The new rows must be the next seqs of the head: (tenant_id, seq) is unique, so n rows
  -- from tree_size to tree_size + n - 1 are exactly the next n; the first must link to the head.
  INSERT INTO receipt_heads (tenant_id) SELECT DISTINCT a.tenant_id FROM added a ORDER BY 1 ON CONFLICT DO NOTHING;
  IF EXISTS (
    SELECT 1
    FROM (SELECT a.tenant_id, count(*) AS n, min(a.seq) AS lo, max(a.seq) AS hi, (array_agg(a.prev_hash ORDER BY a.seq))[1] AS first_prev
          FROM added a GROUP BY a.tenant_id) g
    JOIN (SELECT h.tenant_id, h.tree_size, h.head_hash FROM receipt_heads h
          WHERE h.tenant_id IN (SELECT a.tenant_id FROM added a) ORDER BY h.tenant_id FOR UPDATE) h ON h.tenant_id = g.tenant_id
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
COMMENT ON FUNCTION receipts_chain_check() IS
  'AFTER INSERT (statement) on receipts: the new rows must continue each tenant''s chain from its locked head '
  '(seq, prev_hash, chain_hash), WR005 otherwise; then each head advances once.';
CREATE TRIGGER receipts_chain_check AFTER INSERT ON receipts
  REFERENCING NEW TABLE AS added
  FOR EACH STATEMENT EXECUTE FUNCTION receipts_chain_check();

-- A head only ever moves forward, and only to a stored receipt: its size names the last receipt
-- (seq = tree_size - 1) and its hash is that receipt's chain_hash.
-- The lookup is written as "the latest receipt below tree_size" on purpose: as a plain equality on
-- (tenant_id, seq), a plan made while the table had no statistics (a new database) picked the
-- (tenant_id, receipt_id) index and filtered on seq, reading every receipt of the tenant; an
-- ordered range can only be served by (tenant_id, seq).
CREATE OR REPLACE FUNCTION receipt_heads_guard() RETURNS trigger
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  v_seq bigint;
  v_chain text;
BEGIN
  IF TG_OP = 'UPDATE' AND NEW.tenant_id = OLD.tenant_id AND NEW.tree_size > OLD.tree_size THEN
    SELECT r.seq, r.chain_hash INTO v_seq, v_chain
    FROM receipts r WHERE r.tenant_id = NEW.tenant_id AND r.seq < NEW.tree_size ORDER BY r.seq DESC LIMIT 1;
    IF v_seq = NEW.tree_size - 1 AND v_chain = NEW.head_hash THEN
      RETURN NEW;
    END IF;
  END IF;
  RAISE EXCEPTION 'receipt log heads only advance, to a stored receipt' USING ERRCODE = 'WR001';
END $$;

-- One decision, as before (the careful path of a batch, and the only path for a lone execute):
-- now it computes its link itself under the head lock.
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
    SELECT r.* INTO v_protect FROM receipts r WHERE r.tenant_id = p_tenant_id AND r.receipt_id = p_protect_receipt_id;
    IF NOT FOUND OR v_protect.kind <> 'protect' THEN
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

-- Many decisions in one call and one commit. Fast path, in one subtransaction: lock every head
-- of the batch in tenant order, check the executes' protect receipts, storage and the daily
-- quotas (counted once per tenant, day and kind) by the set, compute the links in one ordered
-- pass (a tenant's items in arrival order) and store everything with one INSERT. Any refusal (a
-- full quota, an execute that lost its race, ...) undoes the attempt, and the careful path gives
-- each item its own subtransaction and its own answer.
CREATE OR REPLACE FUNCTION receipt_append_batch(p_items jsonb)
RETURNS TABLE (idx integer, seq bigint, prev_hash text, chain_hash text, quota_limit integer, quota_used integer,
               error_sqlstate text, error_constraint text, error_message text)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
DECLARE
  it record;
  r record;
  t record;
  v_constraint text;
  v_used integer;
  -- One entry per item answered, in any order.
  v_idx integer[] := '{}';
  v_seq bigint[] := '{}';
  v_prev text[] := '{}';
  v_chain text[] := '{}';
  v_limit integer[] := '{}';
  v_qused integer[] := '{}';
  v_tenant text := NULL;
  v_size bigint;
  v_head text;
  v_link text;
  v_fast boolean := true;
BEGIN
  BEGIN
    -- Every head of the batch, locked in tenant order (instances lock in the same order).
    INSERT INTO receipt_heads (tenant_id)
    SELECT DISTINCT e.value ->> 'tenant_id' FROM jsonb_array_elements(p_items) AS e(value) ORDER BY 1
    ON CONFLICT DO NOTHING;
    PERFORM 1 FROM receipt_heads h
    WHERE h.tenant_id IN (SELECT e.value ->> 'tenant_id' FROM jsonb_array_elements(p_items) AS e(value))
    ORDER BY h.tenant_id FOR UPDATE;

    -- Executes: each must name an ALLOWED protect receipt of its own tenant, younger than 15
    -- minutes and never executed, and only once in the batch. Anything else goes the careful way,
    -- which gives each item its own answer (receipt_append()'s checks, in its order).
    -- Written as one index probe per item on purpose: the generic plan of this statement is
    -- made when receipts may still be small, and a join or hashed subquery chosen then would
    -- read the whole table once it is not. receipt_id alone names a receipt (primary key); the
    -- tenant is compared after.
    IF EXISTS (
      SELECT 1
      FROM jsonb_array_elements(p_items) AS e(value)
      LEFT JOIN LATERAL (
        SELECT r.tenant_id, r.kind, r.decision, r.issued_at FROM receipts r
        WHERE r.receipt_id = e.value ->> 'protect_receipt_id' LIMIT 1
      ) p ON true
      LEFT JOIN LATERAL (
        SELECT true AS executed FROM receipts x WHERE x.protect_receipt_id = e.value ->> 'protect_receipt_id' LIMIT 1
      ) d ON true
      WHERE e.value ->> 'kind' = 'execute'
        AND (p.tenant_id IS DISTINCT FROM e.value ->> 'tenant_id' OR p.kind <> 'protect' OR p.decision <> 'ALLOWED'
             OR (e.value ->> 'timestamp')::timestamptz - p.issued_at >= interval '15 minutes'
             OR d.executed)
    ) OR (
      SELECT count(*) <> count(DISTINCT e.value ->> 'protect_receipt_id')
      FROM jsonb_array_elements(p_items) AS e(value) WHERE e.value ->> 'kind' = 'execute'
    ) THEN
      RAISE EXCEPTION 'an execute of this batch is refused' USING ERRCODE = 'WR002';
    END IF;

    -- Storage for all of a tenant's items at once, then each day's quota counted once per
    -- tenant, day and kind.
    IF EXISTS (
      SELECT 1
      FROM (SELECT e.value ->> 'tenant_id' AS tenant_id, count(*) AS n FROM jsonb_array_elements(p_items) AS e(value) GROUP BY 1) c
      JOIN tenants tn ON tn.tenant_id = c.tenant_id
      JOIN plans p ON p.plan = tn.plan
      JOIN receipt_heads h ON h.tenant_id = c.tenant_id
      WHERE p.receipts_stored IS NOT NULL AND h.tree_size + c.n > p.receipts_stored
    ) THEN
      RAISE EXCEPTION 'receipt storage is full' USING ERRCODE = 'WQ003';
    END IF;
    FOR t IN
      SELECT i.tenant_id, i.day, i.kind, count(*)::integer AS n,
             CASE i.kind WHEN 'protect' THEN p.protect_per_day WHEN 'execute' THEN p.execute_per_day END AS day_limit
      FROM (SELECT e.value ->> 'tenant_id' AS tenant_id, e.value ->> 'kind' AS kind,
                   ((e.value ->> 'timestamp')::timestamptz AT TIME ZONE 'UTC')::date AS day
            FROM jsonb_array_elements(p_items) AS e(value)) i
      JOIN tenants tn ON tn.tenant_id = i.tenant_id
      JOIN plans p ON p.plan = tn.plan
      GROUP BY i.tenant_id, i.day, i.kind, p.protect_per_day, p.execute_per_day
      ORDER BY i.tenant_id, i.day, i.kind
    LOOP
      IF t.kind NOT IN ('protect', 'execute') THEN
        RAISE EXCEPTION 'unknown usage kind %', t.kind USING ERRCODE = '22023';
      END IF;
      v_used := NULL;
      IF t.day_limit IS NULL OR t.day_limit >= t.n THEN
        INSERT INTO usage_daily AS u (tenant_id, day, protect_count, execute_count)
        VALUES (t.tenant_id, t.day, CASE t.kind WHEN 'protect' THEN t.n ELSE 0 END, CASE t.kind WHEN 'execute' THEN t.n ELSE 0 END)
        ON CONFLICT (tenant_id, day) DO UPDATE SET
          protect_count = u.protect_count + CASE t.kind WHEN 'protect' THEN t.n ELSE 0 END,
          execute_count = u.execute_count + CASE t.kind WHEN 'execute' THEN t.n ELSE 0 END
        WHERE t.day_limit IS NULL
           OR (CASE t.kind WHEN 'protect' THEN u.protect_count ELSE u.execute_count END) + t.n <= t.day_limit
        RETURNING 1 INTO v_used;
      END IF;
      IF v_used IS NULL THEN
        RAISE EXCEPTION 'daily % quota of % reached', t.kind, t.day_limit USING ERRCODE = CASE t.kind WHEN 'protect' THEN 'WQ001' ELSE 'WQ002' END;
      END IF;
    END LOOP;

    -- Links, in one ordered pass from each locked head (a tenant's items in arrival order); each
    -- item's quota_used is its place in its tenant's day for its kind (the counters now include
    -- all of them).
    FOR it IN
      SELECT i.i, i.v, i.tenant_id, h.tree_size, h.head_hash,
             CASE i.kind WHEN 'protect' THEN p.protect_per_day ELSE p.execute_per_day END AS day_limit,
             CASE i.kind WHEN 'protect' THEN u.protect_count ELSE u.execute_count END - i.n + i.rank AS used
      FROM (SELECT (e.ord - 1)::integer AS i, e.ord, e.value AS v, e.value ->> 'tenant_id' AS tenant_id, e.value ->> 'kind' AS kind, x.day,
                   row_number() OVER (PARTITION BY e.value ->> 'tenant_id', x.day, e.value ->> 'kind' ORDER BY e.ord)::integer AS rank,
                   count(*) OVER (PARTITION BY e.value ->> 'tenant_id', x.day, e.value ->> 'kind')::integer AS n
            FROM jsonb_array_elements(p_items) WITH ORDINALITY AS e(value, ord)
            CROSS JOIN LATERAL (SELECT ((e.value ->> 'timestamp')::timestamptz AT TIME ZONE 'UTC')::date AS day) x) i
      JOIN receipt_heads h ON h.tenant_id = i.tenant_id
      JOIN tenants tn ON tn.tenant_id = i.tenant_id
      JOIN plans p ON p.plan = tn.plan
      JOIN usage_daily u ON u.tenant_id = i.tenant_id AND u.day = i.day
      ORDER BY i.tenant_id, i.ord
    LOOP
      IF v_tenant IS DISTINCT FROM it.tenant_id THEN
        v_tenant := it.tenant_id;
        v_size := it.tree_size;
        v_head := it.head_hash;
      END IF;
      IF iso_time((it.v ->> 'timestamp')::timestamptz) <> it.v ->> 'timestamp' THEN
        RAISE EXCEPTION 'timestamp % is not in the canonical form', it.v ->> 'timestamp' USING ERRCODE = '22007';
      END IF;
      v_link := receipt_chain_hash(v_head, it.v ->> 'content_hash', it.v ->> 'request_id', it.v ->> 'timestamp', v_size);
      v_idx := v_idx || it.i; v_seq := v_seq || v_size; v_prev := v_prev || v_head; v_chain := v_chain || v_link;
      v_limit := v_limit || it.day_limit; v_qused := v_qused || it.used::integer;
      v_head := v_link;
      v_size := v_size + 1;
    END LOOP;

    -- One INSERT for the whole batch: the links computed above, the rest from the items.
    INSERT INTO receipts (receipt_id, tenant_id, seq, kind, key_id, request_id, issued_at, decision, payload,
                          content_hash, signature, prev_hash, chain_hash, protect_receipt_id)
    SELECT e.value ->> 'receipt_id', e.value ->> 'tenant_id', l.seq, e.value ->> 'kind', e.value ->> 'key_id', e.value ->> 'request_id',
           (e.value ->> 'timestamp')::timestamptz, e.value ->> 'decision', e.value ->> 'payload', e.value ->> 'content_hash',
           e.value ->> 'signature', l.prev, l.chain, e.value ->> 'protect_receipt_id'
    FROM unnest(v_idx, v_seq, v_prev, v_chain) AS l(i, seq, prev, chain)
    JOIN jsonb_array_elements(p_items) WITH ORDINALITY AS e(value, ord) ON e.ord = l.i + 1;
  EXCEPTION WHEN OTHERS THEN
    v_fast := false;
  END;
  IF v_fast THEN
    RETURN QUERY
      SELECT u.i, u.s, u.p, u.c, u.l, u.q, NULL::text, NULL::text, NULL::text
      FROM unnest(v_idx, v_seq, v_prev, v_chain, v_limit, v_qused) AS u(i, s, p, c, l, q);
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
