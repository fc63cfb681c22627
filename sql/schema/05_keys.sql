-- API keys. Only the SHA-256 of a key's secret is stored; a key is revoked, never deleted, so
-- the receipts that name it stay attributable. Refusals raise WK001 (docs/error_codes.md).

CREATE TABLE api_keys (
  key_id        text PRIMARY KEY CHECK (key_id ~ '^key_[0-9A-Za-z]{22}$'),
  tenant_id     text NOT NULL REFERENCES tenants (tenant_id),
  label         text NOT NULL CHECK (char_length(label) BETWEEN 1 AND 100),
  -- Lowercase hex SHA-256 of the whole secret; the secret itself is never stored.
  secret_hash   text NOT NULL CHECK (secret_hash ~ '^[0-9a-f]{64}$'),
  hint          text NOT NULL CHECK (char_length(hint) = 4),
  status        text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'revoked')),
  created_at    timestamptz NOT NULL DEFAULT now(),
  last_used_at  timestamptz,
  revoked_at    timestamptz,
  replaced_by   text REFERENCES api_keys (key_id),
  -- Who made and who ended the key: members of its tenant (NULL: an operator, or before it mattered).
  created_by    text,
  revoked_by    text,
  CONSTRAINT api_keys_created_by_fkey FOREIGN KEY (tenant_id, created_by) REFERENCES members (tenant_id, member_id),
  CONSTRAINT api_keys_revoked_by_fkey FOREIGN KEY (tenant_id, revoked_by) REFERENCES members (tenant_id, member_id),
  CONSTRAINT api_keys_revoked_at_matches_status CHECK ((status = 'revoked') = (revoked_at IS NOT NULL))
);
CREATE UNIQUE INDEX api_keys_secret_hash_key ON api_keys (secret_hash);
CREATE INDEX api_keys_tenant_idx ON api_keys (tenant_id, created_at);
-- Lets a receipt's key be checked together with its tenant in one index probe.
CREATE UNIQUE INDEX api_keys_tenant_key_key ON api_keys (tenant_id, key_id);

-- Keys are born active; a key moves only active -> revoked (replaced_by is set only by that
-- move); a revoked key never changes; identity columns never change; keys are never deleted.
-- Raised as SQLSTATE WK001 (docs/error_codes.md), answered as 409 key_not_active.
CREATE FUNCTION api_keys_guard() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    RAISE EXCEPTION 'api keys are never deleted' USING ERRCODE = 'WK001';
  END IF;
  IF TG_OP = 'INSERT' THEN
    IF NEW.status <> 'active' OR NEW.replaced_by IS NOT NULL THEN
      RAISE EXCEPTION 'a key is created active' USING ERRCODE = 'WK001';
    END IF;
    RETURN NEW;
  END IF;
  IF OLD.status = 'revoked' THEN
    RAISE EXCEPTION 'key % is revoked and cannot change', OLD.key_id USING ERRCODE = 'WK001';
  END IF;
  IF NEW.key_id <> OLD.key_id OR NEW.tenant_id <> OLD.tenant_id OR NEW.secret_hash <> OLD.secret_hash
     OR NEW.hint <> OLD.hint OR NEW.created_at <> OLD.created_at OR NEW.created_by IS DISTINCT FROM OLD.created_by THEN
    RAISE EXCEPTION 'identity columns of key % are immutable', OLD.key_id USING ERRCODE = 'WK001';
  END IF;
  IF NEW.replaced_by IS NOT NULL AND NEW.status <> 'revoked' THEN
    RAISE EXCEPTION 'only a revoked key has a replacement' USING ERRCODE = 'WK001';
  END IF;
  RETURN NEW;
END $$;
COMMENT ON FUNCTION api_keys_guard() IS
  'A key is born active, moves only active -> revoked (replaced_by set only then), never changes once revoked, keeps its identity columns and is never deleted (WK001).';
CREATE TRIGGER api_keys_guard BEFORE INSERT OR UPDATE OR DELETE ON api_keys
  FOR EACH ROW EXECUTE FUNCTION api_keys_guard();

-- Bounds on a tenant's keys (keys are never deleted, so every one is kept): at most
-- api_keys_active_cap() active at once (WK002) and api_keys_total_cap() in all, revoked included (WK003).
CREATE FUNCTION api_keys_active_cap() RETURNS integer LANGUAGE sql IMMUTABLE AS $$ SELECT 20 $$;
COMMENT ON FUNCTION api_keys_active_cap() IS 'Most active API keys one tenant holds at once (WK002 beyond).';
CREATE FUNCTION api_keys_total_cap() RETURNS integer LANGUAGE sql IMMUTABLE AS $$ SELECT 1000 $$;
COMMENT ON FUNCTION api_keys_total_cap() IS 'Most API keys one tenant keeps in all, revoked ones included (WK003 beyond).';

CREATE FUNCTION api_keys_check_caps(p_tenant_id text, p_adds_active boolean) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  v_total integer;
  v_active integer;
BEGIN
  -- Key issues of one tenant take turns until their transaction ends: two cannot both pass at cap - 1.
  PERFORM pg_advisory_xact_lock(hashtext('warden.api_keys'), hashtext(p_tenant_id));
  SELECT count(*), count(*) FILTER (WHERE k.status = 'active') INTO v_total, v_active
  FROM api_keys k WHERE k.tenant_id = p_tenant_id;
  IF v_total >= api_keys_total_cap() THEN
    RAISE EXCEPTION 'tenant % keeps % keys', p_tenant_id, v_total USING ERRCODE = 'WK003';
  END IF;
  IF p_adds_active AND v_active >= api_keys_active_cap() THEN
    RAISE EXCEPTION 'tenant % has % active keys', p_tenant_id, v_active USING ERRCODE = 'WK002';
  END IF;
END $$;
COMMENT ON FUNCTION api_keys_check_caps(text, boolean) IS
  'Refuses one more key of the tenant: WK003 when it keeps api_keys_total_cap() keys, WK002 when it would be active beyond api_keys_active_cap().';

CREATE FUNCTION api_key_create(p_key_id text, p_tenant_id text, p_label text, p_secret_hash text, p_hint text, p_created_by text)
RETURNS TABLE (key_id text, tenant_id text, label text, status text, created_at text, created_by text)
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM member_actor_check(p_tenant_id, p_created_by, 'developer');
  PERFORM api_keys_check_caps(p_tenant_id, true);
  RETURN QUERY
    INSERT INTO api_keys AS k (key_id, tenant_id, label, secret_hash, hint, created_by)
    VALUES (p_key_id, p_tenant_id, p_label, p_secret_hash, p_hint, p_created_by)
    RETURNING k.key_id, k.tenant_id, k.label, k.status, iso_time(k.created_at), k.created_by;
END $$;
COMMENT ON FUNCTION api_key_create(text, text, text, text, text, text) IS
  'A developer (or a wider role) of the tenant issues a new active key within its caps (WK002 active, WK003 total; WT002 the role).';

CREATE FUNCTION api_key_rotate(p_tenant_id text, p_key_id text, p_new_key_id text, p_secret_hash text, p_hint text, p_actor text)
RETURNS TABLE (revoked_key_id text, key_id text, tenant_id text, label text, status text, created_at text, created_by text)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  v_old api_keys%ROWTYPE;
BEGIN
  PERFORM member_actor_check(p_tenant_id, p_actor, 'developer');
  -- The row lock makes concurrent rotations of one key take turns; the second finds it revoked.
  SELECT k.* INTO v_old FROM api_keys k WHERE k.tenant_id = p_tenant_id AND k.key_id = p_key_id FOR UPDATE;
  IF NOT FOUND THEN
    RETURN; -- unknown, or another tenant's: the caller answers 404
  END IF;
  IF v_old.status <> 'active' THEN
    RAISE EXCEPTION 'key % is not active', p_key_id USING ERRCODE = 'WK001';
  END IF;
  -- The successor replaces an active key: only the total grows.
  PERFORM api_keys_check_caps(p_tenant_id, false);
  INSERT INTO api_keys (key_id, tenant_id, label, secret_hash, hint, created_by)
    VALUES (p_new_key_id, p_tenant_id, v_old.label, p_secret_hash, p_hint, p_actor);
  UPDATE api_keys k SET status = 'revoked', revoked_at = now(), replaced_by = p_new_key_id, revoked_by = p_actor WHERE k.key_id = p_key_id;
  RETURN QUERY
    SELECT p_key_id, k.key_id, k.tenant_id, k.label, k.status, iso_time(k.created_at), k.created_by
    FROM api_keys k WHERE k.key_id = p_new_key_id;
END $$;
COMMENT ON FUNCTION api_key_rotate(text, text, text, text, text, text) IS
  'Revokes an active key (replaced_by = the new key) and issues its successor with the same label, in one transaction. No row: not this tenant''s key. WK001: the key is not active; WK003: the tenant keeps api_keys_total_cap() keys.';

-- One page of a tenant's keys, newest first, after the key at (p_after_at, p_after_key) when
-- given; never the secret hash. `page_position` is created_at to the microsecond, for the next cursor.
CREATE FUNCTION api_keys_page(p_tenant_id text, p_after_at timestamptz, p_after_key text, p_limit integer)
RETURNS TABLE (key_id text, tenant_id text, label text, status text, created_at text,
               last_used_at text, revoked_at text, hint text, created_by text, revoked_by text, page_position text)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
    SELECT k.key_id, k.tenant_id, k.label, k.status, iso_time(k.created_at),
           iso_time(k.last_used_at), iso_time(k.revoked_at), k.hint, k.created_by, k.revoked_by,
           to_char(k.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
    FROM api_keys k
    WHERE k.tenant_id = p_tenant_id
      AND (p_after_at IS NULL OR (k.created_at, k.key_id) < (p_after_at, p_after_key))
    ORDER BY k.created_at DESC, k.key_id DESC
    LIMIT p_limit;
END $$;
COMMENT ON FUNCTION api_keys_page(text, timestamptz, text, integer) IS
  'A page of a tenant''s API keys as GET /customer/keys lists them, newest first, after a position; never a secret hash.';

-- What a key-authenticated request needs, for each secret hash of the batch that names a key: the
-- key and its status, the tenant's plan, its active policy version (NULL policy_id: the built-in
-- default) and its verdicts for the features keys call, as arrays aligned with `features`.
-- last_used_at is written at most once a minute, and only on rows no one else holds: a batch never
-- waits on another (two instances' batches cannot deadlock), and a revoke in progress is left to
-- finish. The read is a later statement, so it sees a revoke that committed meanwhile.
-- plan_cache_mode: PL/pgSQL keeps a statement's plan, but PostgreSQL would still plan this one
-- again per call whenever it guessed a custom plan pays, which it never does here.
CREATE FUNCTION api_key_contexts(p_secret_hashes jsonb)
RETURNS TABLE (secret_hash text, key_id text, tenant_id text, status text, plan text,
               policy_id text, policy_version integer, policy_hash text,
               features text[], verdicts text[], required_plans text[])
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
DECLARE
  v_hashes text[] := ARRAY(SELECT DISTINCT h FROM jsonb_array_elements_text(p_secret_hashes) AS h);
BEGIN
  -- Looked for first: the locking update costs a lot more than the read, even when it touches nothing.
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

-- What a key's context depends on (api_key_contexts()): the key's status, its tenant's plan,
-- policies and feature grants, and the plans and features catalogs. Every change to one of them,
-- whoever makes it (a route, an operator script, psql), moves the tenant's key_context_epoch, so a
-- context read earlier may be reused exactly while its tenant's epoch has not moved.
CREATE FUNCTION tenants_key_context_epoch() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.plan IS DISTINCT FROM OLD.plan THEN
    NEW.key_context_epoch := greatest(NEW.key_context_epoch, OLD.key_context_epoch + 1);
  END IF;
  IF NEW.key_context_epoch < OLD.key_context_epoch THEN
    RAISE EXCEPTION 'the key context epoch of % never goes back', OLD.tenant_id USING ERRCODE = 'check_violation';
  END IF;
  -- Heard at commit by a process that holds contexts in memory (the embedded database's service).
  IF NEW.key_context_epoch > OLD.key_context_epoch THEN
    PERFORM pg_notify('key_context', NEW.tenant_id);
  END IF;
  RETURN NEW;
END $$;
COMMENT ON FUNCTION tenants_key_context_epoch() IS
  'A plan change moves the tenant''s key_context_epoch; the epoch never goes back (set back, it could match a context read before a change); '
  'every move is announced on channel key_context with the tenant id as payload.';
CREATE TRIGGER tenants_key_context_epoch BEFORE UPDATE ON tenants
  FOR EACH ROW EXECUTE FUNCTION tenants_key_context_epoch();

CREATE FUNCTION key_context_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE tenants SET key_context_epoch = key_context_epoch + 1
  WHERE tenant_id = (CASE WHEN TG_OP = 'DELETE' THEN OLD.tenant_id ELSE NEW.tenant_id END);
  IF TG_OP = 'UPDATE' AND OLD.tenant_id IS DISTINCT FROM NEW.tenant_id THEN
    UPDATE tenants SET key_context_epoch = key_context_epoch + 1 WHERE tenant_id = OLD.tenant_id;
  END IF;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION key_context_changed() IS
  'Moves the key_context_epoch of the tenant named by the changed row (both tenants when the row moved between them).';

CREATE FUNCTION key_context_changed_for_all() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE tenants SET key_context_epoch = key_context_epoch + 1;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION key_context_changed_for_all() IS
  'Moves every tenant''s key_context_epoch: a catalog changed, or a table was truncated under the row triggers.';

-- The epochs of the tenants named, for reusing contexts read earlier (src/keys/authenticate.ts). A
-- function so that PGlite, which plans every unnamed statement anew, keeps its plan.
CREATE FUNCTION tenant_key_context_epochs(p_tenant_ids text[])
RETURNS TABLE (tenant_id text, key_context_epoch bigint)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY SELECT t.tenant_id, t.key_context_epoch FROM tenants t WHERE t.tenant_id = ANY (p_tenant_ids);
END $$;
COMMENT ON FUNCTION tenant_key_context_epochs(text[]) IS 'Each named tenant''s key_context_epoch.';

-- A key's status (revoke, rotation); last_used_at, written by lookups, moves nothing.
CREATE TRIGGER api_keys_key_context AFTER UPDATE ON api_keys
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION key_context_changed();
CREATE TRIGGER api_keys_key_context_truncate AFTER TRUNCATE ON api_keys
  FOR EACH STATEMENT EXECUTE FUNCTION key_context_changed_for_all();
-- The catalogs: a plan's rank or limits, a feature's required plan or access mode.
CREATE TRIGGER plans_key_context AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON plans
  FOR EACH STATEMENT EXECUTE FUNCTION key_context_changed_for_all();
CREATE TRIGGER features_key_context AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON features
  FOR EACH STATEMENT EXECUTE FUNCTION key_context_changed_for_all();
