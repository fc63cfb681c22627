-- Keys, policies, the receipt log, quotas and idempotency (issue 4; contract sections 3 to 5).
-- Written for PostgreSQL 15; runs unchanged on the embedded PGlite.
-- Custom SQLSTATEs (docs/error_codes.md):
--   WK001 key not active            WP001 policy versions are immutable
--   WR001 receipts are append-only  WR002 no such protect receipt   WR003 protect decision DENIED
--   WR004 protect receipt too old   WQ001 protect_per_day   WQ002 execute_per_day   WQ003 receipts_stored
--   WI001 a completed idempotency record changed

-- Hashes ------------------------------------------------------------------------------------

-- "0x" + lowercase hex SHA-256 of the UTF-8 bytes of a text. The database encoding is UTF8, so
-- the result depends only on the argument.
CREATE FUNCTION sha256_hex(p_text text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT '0x' || encode(sha256(convert_to(p_text, 'UTF8')), 'hex') $$;
COMMENT ON FUNCTION sha256_hex(text) IS '"0x" + hex SHA-256 of the UTF-8 bytes of a text, the form every warden hash travels in.';

-- Keys --------------------------------------------------------------------------------------

-- Lets receipts name the key that asked with a foreign key that also pins the tenant.
CREATE UNIQUE INDEX api_keys_tenant_key_key ON api_keys (tenant_id, key_id);

CREATE FUNCTION api_key_rotate(p_tenant_id text, p_key_id text, p_new_key_id text, p_secret_hash text, p_hint text)
RETURNS TABLE (revoked_key_id text, key_id text, tenant_id text, label text, status text, created_at text)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  v_old api_keys%ROWTYPE;
BEGIN
  -- The row lock makes concurrent rotations of one key take turns; the second finds it revoked.
  SELECT k.* INTO v_old FROM api_keys k WHERE k.tenant_id = p_tenant_id AND k.key_id = p_key_id FOR UPDATE;
  IF NOT FOUND THEN
    RETURN; -- unknown, or another tenant's: the caller answers 404
  END IF;
  IF v_old.status <> 'active' THEN
    RAISE EXCEPTION 'key % is not active', p_key_id USING ERRCODE = 'WK001';
  END IF;
  INSERT INTO api_keys (key_id, tenant_id, label, secret_hash, hint)
    VALUES (p_new_key_id, p_tenant_id, v_old.label, p_secret_hash, p_hint);
  UPDATE api_keys k SET status = 'revoked', revoked_at = now(), replaced_by = p_new_key_id WHERE k.key_id = p_key_id;
  RETURN QUERY
    SELECT p_key_id, k.key_id, k.tenant_id, k.label, k.status, iso_time(k.created_at)
    FROM api_keys k WHERE k.key_id = p_new_key_id;
END $$;
COMMENT ON FUNCTION api_key_rotate(text, text, text, text, text) IS
  'Revokes an active key (replaced_by = the new key) and issues its successor with the same label, in one transaction. No row: not this tenant''s key. WK001: the key is not active.';

-- Policies ----------------------------------------------------------------------------------

-- Custom policy versions of a tenant. Version 1 of every tenant is the built-in default
-- (pol_default), which lives in code; custom versions start at 2. The document is stored as its
-- RFC 8785 (JCS) text, the exact bytes its hash covers.
CREATE TABLE policies (
  tenant_id   text NOT NULL REFERENCES tenants (tenant_id),
  version     integer NOT NULL CHECK (version >= 2),
  policy_id   text NOT NULL,
  document    text NOT NULL CHECK (starts_with(document, '{')),
  hash        text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, version),
  CONSTRAINT policies_policy_id_matches_tenant CHECK (policy_id = 'pol_' || substr(tenant_id, 6)),
  CONSTRAINT policies_hash_matches_document CHECK (hash = sha256_hex(document))
);

-- Receipts name a policy version forever, so a version never changes or disappears.
CREATE FUNCTION policies_immutable() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'policy versions are immutable' USING ERRCODE = 'WP001';
END $$;
CREATE TRIGGER policies_immutable BEFORE UPDATE OR DELETE ON policies
  FOR EACH ROW EXECUTE FUNCTION policies_immutable();
CREATE TRIGGER policies_no_truncate BEFORE TRUNCATE ON policies
  FOR EACH STATEMENT EXECUTE FUNCTION policies_immutable();

CREATE FUNCTION policy_publish(p_tenant_id text, p_document text, p_hash text)
RETURNS TABLE (policy_id text, version integer, hash text, document text, created_at text)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  v_next integer;
BEGIN
  -- Concurrent publishes of one tenant take turns (and get consecutive versions); other tenants
  -- are not held up.
  PERFORM pg_advisory_xact_lock(hashtextextended('warden.policy:' || p_tenant_id, 0));
  SELECT coalesce(max(p.version), 1) + 1 INTO v_next FROM policies p WHERE p.tenant_id = p_tenant_id;
  RETURN QUERY
    INSERT INTO policies AS p (tenant_id, version, policy_id, document, hash)
    VALUES (p_tenant_id, v_next, 'pol_' || substr(p_tenant_id, 6), p_document, p_hash)
    RETURNING p.policy_id, p.version, p.hash, p.document, iso_time(p.created_at);
END $$;
COMMENT ON FUNCTION policy_publish(text, text, text) IS
  'Stores a new immutable policy version of a tenant (the latest plus one; 2 for the first custom one) and returns it.';

-- Receipt log -------------------------------------------------------------------------------

-- chain_hash of contract section 4: SHA-256 of the JCS text of
-- {prev, content_hash, request_id, timestamp, seq}. JCS sorts the keys (content_hash, prev,
-- request_id, seq, timestamp) and escapes strings as JSON does; every string here is hex, ISO
-- time or a visible-ASCII request id (the receipts CHECK), for which to_json() escapes exactly as
-- JCS does. src/receipts/chain.ts computes the same in TypeScript; a test checks they agree.
CREATE FUNCTION receipt_chain_hash(p_prev text, p_content_hash text, p_request_id text, p_timestamp text, p_seq bigint)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT sha256_hex(
    '{"content_hash":' || to_json(p_content_hash)::text ||
    ',"prev":' || coalesce(to_json(p_prev)::text, 'null') ||
    ',"request_id":' || to_json(p_request_id)::text ||
    ',"seq":' || p_seq::text ||
    ',"timestamp":' || to_json(p_timestamp)::text || '}')
$$;
COMMENT ON FUNCTION receipt_chain_hash(text, text, text, text, bigint) IS
  'chain_hash = "0x" + hex SHA-256 of JCS {prev, content_hash, request_id, timestamp, seq} (contract section 4).';

-- One row per tenant with a receipt: the size of its log and the last chain_hash. Appends lock
-- this row, so one tenant's appends take turns while other tenants' run in parallel.
CREATE TABLE receipt_heads (
  tenant_id  text PRIMARY KEY REFERENCES tenants (tenant_id),
  tree_size  bigint NOT NULL DEFAULT 0 CHECK (tree_size >= 0),
  head_hash  text CHECK (head_hash ~ '^0x[0-9a-f]{64}$'),
  CONSTRAINT receipt_heads_hash_matches_size CHECK ((tree_size = 0) = (head_hash IS NULL))
);

CREATE TABLE receipts (
  receipt_id          text PRIMARY KEY CHECK (receipt_id ~ '^rcpt_[0-9A-Za-z]{22}$'),
  tenant_id           text NOT NULL REFERENCES tenants (tenant_id),
  seq                 bigint NOT NULL CHECK (seq >= 0),
  kind                text NOT NULL CHECK (kind IN ('protect', 'execute')),
  key_id              text NOT NULL,
  request_id          text NOT NULL CHECK (request_id ~ '^[\x21-\x7e]{1,128}$'),
  issued_at           timestamptz NOT NULL,
  decision            text NOT NULL CHECK (decision IN ('ALLOWED', 'DENIED')),
  -- The JCS text of the payload: exactly the bytes content_hash covers (jsonb would refuse a
  -- \u0000 in an input string and would not keep the bytes).
  payload             text NOT NULL,
  content_hash        text NOT NULL,
  signature           text NOT NULL CHECK (signature ~ '^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$'),
  prev_hash           text CHECK (prev_hash ~ '^0x[0-9a-f]{64}$'),
  chain_hash          text NOT NULL CHECK (chain_hash ~ '^0x[0-9a-f]{64}$'),
  protect_receipt_id  text,
  CONSTRAINT receipts_tenant_seq_key UNIQUE (tenant_id, seq),
  CONSTRAINT receipts_tenant_receipt_key UNIQUE (tenant_id, receipt_id),
  -- An allowed protect decision is executed at most once.
  CONSTRAINT receipts_execute_once UNIQUE (protect_receipt_id),
  CONSTRAINT receipts_key_fkey FOREIGN KEY (tenant_id, key_id) REFERENCES api_keys (tenant_id, key_id),
  CONSTRAINT receipts_protect_receipt_fkey FOREIGN KEY (tenant_id, protect_receipt_id) REFERENCES receipts (tenant_id, receipt_id),
  CONSTRAINT receipts_content_hash_matches_payload CHECK (content_hash = sha256_hex(payload)),
  -- "decision" is the first key of the JCS payload, so this pins the column to what was hashed.
  CONSTRAINT receipts_decision_matches_payload CHECK (starts_with(payload, '{"decision":"' || decision || '",')),
  CONSTRAINT receipts_execute_names_protect CHECK ((kind = 'execute') = (protect_receipt_id IS NOT NULL)),
  CONSTRAINT receipts_prev_matches_seq CHECK ((seq = 0) = (prev_hash IS NULL))
);

-- Every insert is chained, whoever writes it: seq, prev_hash and chain_hash come from the
-- tenant's head, locked until the transaction ends.
CREATE FUNCTION receipt_chain_append() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  v_size bigint;
  v_head text;
BEGIN
  SELECT h.tree_size, h.head_hash INTO v_size, v_head FROM receipt_heads h WHERE h.tenant_id = NEW.tenant_id FOR UPDATE;
  IF NOT FOUND THEN
    INSERT INTO receipt_heads (tenant_id) VALUES (NEW.tenant_id) ON CONFLICT DO NOTHING;
    SELECT h.tree_size, h.head_hash INTO v_size, v_head FROM receipt_heads h WHERE h.tenant_id = NEW.tenant_id FOR UPDATE;
  END IF;
  NEW.seq := v_size;
  NEW.prev_hash := v_head;
  NEW.chain_hash := receipt_chain_hash(v_head, NEW.content_hash, NEW.request_id, iso_time(NEW.issued_at), v_size);
  UPDATE receipt_heads h SET tree_size = v_size + 1, head_hash = NEW.chain_hash WHERE h.tenant_id = NEW.tenant_id;
  RETURN NEW;
END $$;
COMMENT ON FUNCTION receipt_chain_append() IS
  'BEFORE INSERT on receipts: assigns seq (0, 1, 2, ... per tenant), prev_hash and chain_hash from the tenant''s locked head and advances the head.';
CREATE TRIGGER receipt_chain_append BEFORE INSERT ON receipts
  FOR EACH ROW EXECUTE FUNCTION receipt_chain_append();

CREATE FUNCTION receipts_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'receipts are append-only' USING ERRCODE = 'WR001';
END $$;
COMMENT ON FUNCTION receipts_append_only() IS 'Refuses UPDATE, DELETE and TRUNCATE of stored receipts (WR001).';
CREATE TRIGGER receipts_append_only BEFORE UPDATE OR DELETE ON receipts
  FOR EACH ROW EXECUTE FUNCTION receipts_append_only();
CREATE TRIGGER receipts_no_truncate BEFORE TRUNCATE ON receipts
  FOR EACH STATEMENT EXECUTE FUNCTION receipts_append_only();

-- A head only ever advances by one receipt and is never removed.
CREATE FUNCTION receipt_heads_guard() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND NEW.tenant_id = OLD.tenant_id AND NEW.tree_size = OLD.tree_size + 1 THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'receipt log heads only advance' USING ERRCODE = 'WR001';
END $$;
CREATE TRIGGER receipt_heads_guard BEFORE UPDATE OR DELETE ON receipt_heads
  FOR EACH ROW EXECUTE FUNCTION receipt_heads_guard();
CREATE TRIGGER receipt_heads_no_truncate BEFORE TRUNCATE ON receipt_heads
  FOR EACH STATEMENT EXECUTE FUNCTION receipt_heads_guard();

-- Quotas ------------------------------------------------------------------------------------

-- Counts one protect or execute call into usage_daily for the UTC day, unless the tenant's plan
-- (read now, so an approved upgrade counts from the next call) says the day is full.
CREATE FUNCTION usage_consume(p_tenant_id text, p_kind text, p_day date)
RETURNS TABLE (quota_limit integer, quota_used integer)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  v_limit integer;
  v_used integer;
BEGIN
  SELECT CASE p_kind WHEN 'protect' THEN p.protect_per_day WHEN 'execute' THEN p.execute_per_day END INTO v_limit
  FROM tenants t JOIN plans p ON p.plan = t.plan WHERE t.tenant_id = p_tenant_id;
  IF p_kind NOT IN ('protect', 'execute') THEN
    RAISE EXCEPTION 'unknown usage kind %', p_kind USING ERRCODE = '22023';
  END IF;
  IF v_limit IS NULL OR v_limit > 0 THEN
    -- The WHERE makes check and increment one atomic step, also across instances.
    INSERT INTO usage_daily AS u (tenant_id, day, protect_count, execute_count)
    VALUES (p_tenant_id, p_day, (p_kind = 'protect')::int, (p_kind = 'execute')::int)
    ON CONFLICT (tenant_id, day) DO UPDATE SET
      protect_count = u.protect_count + (p_kind = 'protect')::int,
      execute_count = u.execute_count + (p_kind = 'execute')::int
    WHERE v_limit IS NULL OR (CASE p_kind WHEN 'protect' THEN u.protect_count ELSE u.execute_count END) < v_limit
    RETURNING CASE p_kind WHEN 'protect' THEN u.protect_count ELSE u.execute_count END INTO v_used;
  END IF;
  IF v_used IS NULL THEN
    IF p_kind = 'protect' THEN
      RAISE EXCEPTION 'daily protect quota of % reached', v_limit USING ERRCODE = 'WQ001';
    END IF;
    RAISE EXCEPTION 'daily execute quota of % reached', v_limit USING ERRCODE = 'WQ002';
  END IF;
  RETURN QUERY SELECT v_limit, v_used;
END $$;
COMMENT ON FUNCTION usage_consume(text, text, date) IS
  'Counts one protect or execute call of a tenant for a UTC day within its current plan''s daily limit (NULL = unlimited); WQ001/WQ002 when the day is full.';

-- Appending a decision ----------------------------------------------------------------------

CREATE FUNCTION receipt_append(
  p_receipt_id text, p_tenant_id text, p_key_id text, p_kind text, p_request_id text, p_timestamp text,
  p_decision text, p_payload text, p_content_hash text, p_signature text, p_protect_receipt_id text
) RETURNS TABLE (seq bigint, prev_hash text, chain_hash text, quota_limit integer, quota_used integer)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  v_ts timestamptz := p_timestamp::timestamptz;
  v_size bigint;
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
  SELECT h.tree_size INTO v_size FROM receipt_heads h WHERE h.tenant_id = p_tenant_id FOR UPDATE;
  IF NOT FOUND THEN
    INSERT INTO receipt_heads (tenant_id) VALUES (p_tenant_id) ON CONFLICT DO NOTHING;
    SELECT h.tree_size INTO v_size FROM receipt_heads h WHERE h.tenant_id = p_tenant_id FOR UPDATE;
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
    INSERT INTO receipts AS r (receipt_id, tenant_id, kind, key_id, request_id, issued_at, decision, payload,
                               content_hash, signature, protect_receipt_id)
    VALUES (p_receipt_id, p_tenant_id, p_kind, p_key_id, p_request_id, v_ts, p_decision, p_payload,
            p_content_hash, p_signature, p_protect_receipt_id)
    RETURNING r.seq, r.prev_hash, r.chain_hash, v_quota.quota_limit, v_quota.quota_used;
END $$;
COMMENT ON FUNCTION receipt_append(text, text, text, text, text, text, text, text, text, text, text) IS
  'Stores a protect or execute decision as the tenant''s next receipt and counts it against the plan, all or nothing. '
  'Execute: WR002 no such protect receipt of this tenant, WR003 it was DENIED, WR004 older than 15 minutes, '
  'receipts_execute_once when already executed. Quotas: WQ003 storage full, WQ001/WQ002 day full.';

-- Idempotency -------------------------------------------------------------------------------

-- The first response to a POST carrying an Idempotency-Key, replayed for 24 hours.
CREATE TABLE idempotency_keys (
  tenant_id         text NOT NULL REFERENCES tenants (tenant_id),
  idempotency_key   text NOT NULL CHECK (char_length(idempotency_key) BETWEEN 1 AND 255),
  -- Hex SHA-256 over method, path and the JCS body: the same key with another request is a mismatch.
  fingerprint       text NOT NULL CHECK (fingerprint ~ '^[0-9a-f]{64}$'),
  status            text NOT NULL DEFAULT 'in_progress' CHECK (status IN ('in_progress', 'completed')),
  response_status   integer CHECK (response_status BETWEEN 200 AND 499),
  response_headers  jsonb,
  response_body     text,
  created_at        timestamptz NOT NULL DEFAULT now(),
  completed_at      timestamptz,
  PRIMARY KEY (tenant_id, idempotency_key),
  CONSTRAINT idempotency_keys_response_matches_status CHECK ((status = 'completed') =
    (response_status IS NOT NULL AND response_headers IS NOT NULL AND response_body IS NOT NULL AND completed_at IS NOT NULL))
);
CREATE INDEX idempotency_keys_expiry_idx ON idempotency_keys (tenant_id, created_at);

-- A claim moves only in_progress -> completed, once; rows go away only by deletion.
CREATE FUNCTION idempotency_keys_guard() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.status <> 'in_progress' OR NEW.status <> 'completed' OR NEW.tenant_id <> OLD.tenant_id
     OR NEW.idempotency_key <> OLD.idempotency_key OR NEW.fingerprint <> OLD.fingerprint OR NEW.created_at <> OLD.created_at THEN
    RAISE EXCEPTION 'an idempotency record is completed once and then never changes' USING ERRCODE = 'WI001';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER idempotency_keys_guard BEFORE UPDATE ON idempotency_keys
  FOR EACH ROW EXECUTE FUNCTION idempotency_keys_guard();

CREATE FUNCTION idempotency_claim(p_tenant_id text, p_key text, p_fingerprint text)
RETURNS TABLE (outcome text, response_status integer, response_headers jsonb, response_body text)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  r idempotency_keys%ROWTYPE;
BEGIN
  -- Keys live 24 hours: this tenant's expired records go first, so an old key is free again.
  DELETE FROM idempotency_keys i WHERE i.tenant_id = p_tenant_id AND i.created_at < now() - interval '24 hours';
  LOOP
    INSERT INTO idempotency_keys (tenant_id, idempotency_key, fingerprint)
      VALUES (p_tenant_id, p_key, p_fingerprint) ON CONFLICT DO NOTHING;
    IF FOUND THEN
      RETURN QUERY SELECT 'claimed'::text, NULL::integer, NULL::jsonb, NULL::text;
      RETURN;
    END IF;
    SELECT i.* INTO r FROM idempotency_keys i WHERE i.tenant_id = p_tenant_id AND i.idempotency_key = p_key;
    IF FOUND THEN
      RETURN QUERY SELECT
        CASE WHEN r.fingerprint <> p_fingerprint THEN 'mismatch' WHEN r.status = 'in_progress' THEN 'in_progress' ELSE 'completed' END,
        r.response_status, r.response_headers, r.response_body;
      RETURN;
    END IF;
    -- The other claim was released between the two statements: try again.
  END LOOP;
END $$;
COMMENT ON FUNCTION idempotency_claim(text, text, text) IS
  'Claims an Idempotency-Key for a request: claimed (run it), completed (replay the stored response), in_progress, or mismatch (same key, other request).';
