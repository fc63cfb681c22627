-- API keys. Only the SHA-256 of a key's secret is stored; a key is revoked, never deleted, so
-- the receipts that name it stay attributable. Refusals raise WK001 (docs/error_codes.md).

CREATE TABLE api_keys (
  key_id        text NOT NULL CHECK (key_id ~ '^key_[0-9A-Za-z]{22}$'),
  tenant_id     text NOT NULL REFERENCES tenants (tenant_id),
  label         text NOT NULL CHECK (char_length(label) BETWEEN 1 AND 100),
  -- Lowercase hex SHA-256 of the whole secret; the secret itself is never stored. Unique across
  -- tenants through key_routes (below), where a request's secret finds its key.
  secret_hash   text NOT NULL CHECK (secret_hash ~ '^[0-9a-f]{64}$'),
  hint          text NOT NULL CHECK (char_length(hint) = 4),
  status        text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'revoked')),
  created_at    timestamptz NOT NULL DEFAULT now(),
  last_used_at  timestamptz,
  revoked_at    timestamptz,
  replaced_by   text,
  -- Who made and who ended the key: members of its tenant (NULL: an operator, or before it mattered).
  created_by    text,
  revoked_by    text,
  -- What the key may do (docs/api.md, "Keys for agents"); NULL: no restriction of that kind.
  expires_at    timestamptz,
  enabled       boolean NOT NULL DEFAULT true,
  actions       text[] CHECK (cardinality(actions) BETWEEN 1 AND 50),
  protect_per_day integer CHECK (protect_per_day >= 1),
  per_second    integer CHECK (per_second BETWEEN 1 AND 10000),
  burst         integer CHECK (burst BETWEEN 1 AND 10000),
  allowed_ips   cidr[] CHECK (cardinality(allowed_ips) BETWEEN 1 AND 50),
  metadata      jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata) = 'object'),
  -- A key rotated with an overlap: its secret is still accepted until then.
  overlap_until timestamptz,
  -- Keyed by tenant first, as every tenant table (docs/scaling.md); receipts and approvals name a
  -- key together with its tenant.
  PRIMARY KEY (tenant_id, key_id),
  CONSTRAINT api_keys_replaced_by_fkey FOREIGN KEY (tenant_id, replaced_by) REFERENCES api_keys (tenant_id, key_id),
  CONSTRAINT api_keys_burst_needs_rate CHECK (burst IS NULL OR per_second IS NOT NULL),
  CONSTRAINT api_keys_overlap_when_revoked CHECK (overlap_until IS NULL OR status = 'revoked'),
  CONSTRAINT api_keys_created_by_fkey FOREIGN KEY (tenant_id, created_by) REFERENCES members (tenant_id, member_id),
  CONSTRAINT api_keys_revoked_by_fkey FOREIGN KEY (tenant_id, revoked_by) REFERENCES members (tenant_id, member_id),
  CONSTRAINT api_keys_revoked_at_matches_status CHECK ((status = 'revoked') = (revoked_at IS NOT NULL))
);
-- No other index leads with tenant_id: a lookup by (tenant_id, key_id) then has the primary key
-- alone to take, whatever the statistics (a plan made while the table was small could otherwise
-- take another and filter on key_id). A tenant's keys, at most api_keys_total_cap(), are listed
-- and counted through the primary key.

-- A secret's hash -> its key and tenant: a request carries only the secret, so its key is found
-- here first and then read in its tenant (docs/scaling.md). The primary key keeps secret hashes
-- unique. Written only by key_route_add(); keys are never deleted and their secret hash never
-- changes, so a route never changes either.
CREATE TABLE key_routes (
  secret_hash  text PRIMARY KEY,
  tenant_id    text NOT NULL,
  key_id       text NOT NULL
);

-- Written by each procedure that inserts a key, in its transaction (tenant_signup(),
-- api_key_create(), api_key_rotate()), not by a trigger: distributed by tenant (docs/scaling.md),
-- a trigger on api_keys runs on the key's shard, where it may write no other table.
CREATE FUNCTION key_route_add(p_tenant_id text, p_key_id text, p_secret_hash text) RETURNS void
LANGUAGE sql VOLATILE AS $$
  INSERT INTO key_routes (secret_hash, tenant_id, key_id) VALUES (p_secret_hash, p_tenant_id, p_key_id)
$$;
COMMENT ON FUNCTION key_route_add(text, text, text) IS
  'Routes a new key''s secret hash to it (key_routes); a secret hash used twice is 23505. Called by every procedure that inserts a key.';

-- Keys are born active; a key moves only active -> revoked (replaced_by is set only by that
-- move); a revoked key never changes, except that a revoke ends a rotation's overlap early; identity columns never change; keys are never deleted.
-- Raised as SQLSTATE WK001 (docs/error_codes.md), answered as 409 key_not_active.
CREATE FUNCTION api_keys_guard() RETURNS trigger
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF TG_OP IN ('DELETE', 'TRUNCATE') THEN
    RAISE EXCEPTION 'api keys are never deleted' USING ERRCODE = 'WK001';
  END IF;
  IF TG_OP = 'INSERT' THEN
    IF NEW.status <> 'active' OR NEW.replaced_by IS NOT NULL THEN
      RAISE EXCEPTION 'a key is created active' USING ERRCODE = 'WK001';
    END IF;
    RETURN NEW;
  END IF;
  IF OLD.status = 'revoked' THEN
    -- The one change of a revoked key: a revoke that ends a rotation's overlap still running.
    IF OLD.overlap_until > now() AND NEW.overlap_until IS NULL
       AND to_jsonb(NEW) - 'overlap_until' = to_jsonb(OLD) - 'overlap_until' THEN
      RETURN NEW;
    END IF;
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
  'A key is born active, moves only active -> revoked (replaced_by set only then), never changes once revoked, keeps its identity columns and is never deleted nor truncated (WK001).';
CREATE TRIGGER api_keys_guard BEFORE INSERT OR UPDATE OR DELETE ON api_keys
  FOR EACH ROW EXECUTE FUNCTION api_keys_guard();
CREATE TRIGGER api_keys_no_truncate BEFORE TRUNCATE ON api_keys
  FOR EACH STATEMENT EXECUTE FUNCTION api_keys_guard();

-- Bounds on a tenant's keys (keys are never deleted, so every one is kept): at most
-- api_keys_active_cap() active at once (WK002) and api_keys_total_cap() in all, revoked included (WK003).
CREATE FUNCTION api_keys_active_cap() RETURNS integer LANGUAGE sql IMMUTABLE AS $$ SELECT 20 $$;
COMMENT ON FUNCTION api_keys_active_cap() IS 'Most active API keys one tenant holds at once (WK002 beyond).';
CREATE FUNCTION api_keys_total_cap() RETURNS integer LANGUAGE sql IMMUTABLE AS $$ SELECT 1000 $$;
COMMENT ON FUNCTION api_keys_total_cap() IS 'Most API keys one tenant keeps in all, revoked ones included (WK003 beyond).';

CREATE FUNCTION api_keys_check_caps(p_tenant_id text, p_adds_active boolean) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
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

-- The properties a key may be given at creation or by PATCH (docs/api.md, "Keys for agents"), as
-- a JSON object of the fields the caller sent (a field absent: unchanged; null: cleared). The
-- routes check each field's shape; here, what needs the database: an expiry in the future (WK004)
-- and a daily limit within the plan's (WK005).
CREATE FUNCTION api_key_props_check(p_tenant_id text, p_props jsonb) RETURNS void
LANGUAGE plpgsql STABLE AS $$
DECLARE
  v_plan_limit integer;
BEGIN
  IF p_props ? 'expires_at' AND jsonb_typeof(p_props->'expires_at') = 'string' AND (p_props->>'expires_at')::timestamptz <= now() THEN
    RAISE EXCEPTION 'expires_at % is not in the future', p_props->>'expires_at' USING ERRCODE = 'WK004';
  END IF;
  IF jsonb_typeof(p_props #> '{limits,protect_per_day}') = 'number' THEN
    SELECT pl.protect_per_day INTO v_plan_limit FROM tenants t JOIN plans pl ON pl.plan = t.plan WHERE t.tenant_id = p_tenant_id;
    IF v_plan_limit IS NOT NULL AND (p_props #>> '{limits,protect_per_day}')::integer > v_plan_limit THEN
      RAISE EXCEPTION 'protect_per_day above the plan''s %', v_plan_limit USING ERRCODE = 'WK005';
    END IF;
  END IF;
END $$;
COMMENT ON FUNCTION api_key_props_check(text, jsonb) IS
  'Refuses key properties the database must judge: expires_at not in the future (WK004), limits.protect_per_day above the tenant''s plan (WK005).';

-- The key row with p_props applied (see api_key_props_check()); fields absent stay as they were.
CREATE FUNCTION api_key_props_apply(k api_keys, p_props jsonb) RETURNS api_keys
LANGUAGE plpgsql STABLE AS $$
BEGIN
  IF p_props ? 'label' THEN k.label := p_props->>'label'; END IF;
  IF p_props ? 'expires_at' THEN k.expires_at := (p_props->>'expires_at')::timestamptz; END IF;
  IF p_props ? 'enabled' THEN k.enabled := (p_props->>'enabled')::boolean; END IF;
  IF p_props ? 'actions' THEN
    k.actions := CASE WHEN jsonb_typeof(p_props->'actions') = 'array' THEN ARRAY(SELECT jsonb_array_elements_text(p_props->'actions')) END;
  END IF;
  IF p_props ? 'limits' THEN
    k.protect_per_day := (p_props #>> '{limits,protect_per_day}')::integer;
    k.per_second := (p_props #>> '{limits,per_second}')::integer;
    k.burst := (p_props #>> '{limits,burst}')::integer;
  END IF;
  IF p_props ? 'allowed_ips' THEN
    k.allowed_ips := CASE WHEN jsonb_typeof(p_props->'allowed_ips') = 'array' THEN ARRAY(SELECT jsonb_array_elements_text(p_props->'allowed_ips'))::cidr[] END;
  END IF;
  IF p_props ? 'metadata' THEN k.metadata := coalesce(nullif(p_props->'metadata', 'null'::jsonb), '{}'::jsonb); END IF;
  RETURN k;
END $$;
COMMENT ON FUNCTION api_key_props_apply(api_keys, jsonb) IS
  'A key row with the properties of a JSON object applied (label, expires_at, enabled, actions, limits as a whole, allowed_ips, metadata; null clears).';

-- A key's properties as the API shows them (GET /customer/keys).
CREATE FUNCTION api_key_props_json(k api_keys) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$
  SELECT jsonb_build_object(
    'label', k.label, 'expires_at', iso_time(k.expires_at), 'enabled', k.enabled, 'actions', to_jsonb(k.actions),
    'limits', jsonb_strip_nulls(jsonb_build_object('protect_per_day', k.protect_per_day, 'per_second', k.per_second, 'burst', k.burst)),
    'allowed_ips', to_jsonb(k.allowed_ips::text[]), 'metadata', k.metadata)
$$;
COMMENT ON FUNCTION api_key_props_json(api_keys) IS 'A key''s settable properties as GET /customer/keys shows them (limits {} when none).';

CREATE FUNCTION api_key_create(p_key_id text, p_tenant_id text, p_label text, p_secret_hash text, p_hint text, p_created_by text, p_props jsonb)
RETURNS TABLE (key_id text, tenant_id text, label text, status text, created_at text, created_by text)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v api_keys;
BEGIN
  PERFORM member_actor_check(p_tenant_id, p_created_by, 'developer');
  -- The maker's removal waits for this key, and revokes it with the others when asked (member_remove()).
  PERFORM member_hold(p_tenant_id, p_created_by);
  PERFORM api_keys_check_caps(p_tenant_id, true);
  PERFORM api_key_props_check(p_tenant_id, p_props);
  v := api_key_props_apply(ROW(p_key_id, p_tenant_id, p_label, p_secret_hash, p_hint, 'active', now(), NULL, NULL, NULL, p_created_by, NULL,
                               NULL, true, NULL, NULL, NULL, NULL, NULL, '{}'::jsonb, NULL)::api_keys, p_props);
  INSERT INTO api_keys SELECT v.*;
  PERFORM key_route_add(v.tenant_id, v.key_id, v.secret_hash);
  RETURN QUERY SELECT v.key_id, v.tenant_id, v.label, v.status, iso_time(v.created_at), v.created_by;
END $$;
COMMENT ON FUNCTION api_key_create(text, text, text, text, text, text, jsonb) IS
  'A developer (or a wider role) of the tenant issues a new active key within its caps (WK002 active, WK003 total; WT002 the role), '
  'with the properties of p_props (api_key_props_apply(); WK004, WK005).';

-- The key a change is about, locked for the change: NULL (every field) when the tenant has no such
-- key, WK001 when it is not active. Concurrent changes of one key take turns on the row lock.
CREATE FUNCTION api_key_lock_active(p_tenant_id text, p_key_id text) RETURNS api_keys
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_key api_keys;
BEGIN
  SELECT k.* INTO v_key FROM api_keys k WHERE k.tenant_id = p_tenant_id AND k.key_id = p_key_id FOR UPDATE;
  IF FOUND AND v_key.status <> 'active' THEN
    RAISE EXCEPTION 'key % is not active', p_key_id USING ERRCODE = 'WK001';
  END IF;
  RETURN v_key;
END $$;
COMMENT ON FUNCTION api_key_lock_active(text, text) IS
  'Locks the tenant''s key for a change (FOR UPDATE) and answers it; NULL fields when there is none; WK001 when it is not active.';

CREATE FUNCTION api_key_update(p_tenant_id text, p_key_id text, p_props jsonb, p_actor text)
RETURNS TABLE (key_id text, changed jsonb)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
  v_old api_keys;
  v_new api_keys;
BEGIN
  PERFORM member_actor_check(p_tenant_id, p_actor, 'developer');
  v_old := api_key_lock_active(p_tenant_id, p_key_id);
  IF v_old.key_id IS NULL THEN
    RETURN; -- unknown, or another tenant's: the caller answers 404
  END IF;
  PERFORM api_key_props_check(p_tenant_id, p_props);
  v_new := api_key_props_apply(v_old, p_props);
  UPDATE api_keys k SET label = v_new.label, expires_at = v_new.expires_at, enabled = v_new.enabled, actions = v_new.actions,
         protect_per_day = v_new.protect_per_day, per_second = v_new.per_second, burst = v_new.burst,
         allowed_ips = v_new.allowed_ips, metadata = v_new.metadata
  WHERE k.tenant_id = p_tenant_id AND k.key_id = p_key_id;
  -- The new value of each property that changed, for the audit trail.
  RETURN QUERY
    SELECT p_key_id, coalesce(jsonb_object_agg(n.key, n.value), '{}'::jsonb)
    FROM jsonb_each(api_key_props_json(v_new)) n
    WHERE n.value IS DISTINCT FROM api_key_props_json(v_old) -> n.key;
END $$;
COMMENT ON FUNCTION api_key_update(text, text, jsonb, text) IS
  'PATCH /customer/keys/{key_id}: a developer (or wider) changes an active key''s properties (api_key_props_apply()) and gets the new value of '
  'each that changed. No row: not this tenant''s key. '
  'WK001: the key is not active; WK004, WK005: api_key_props_check().';

CREATE FUNCTION api_key_rotate(p_tenant_id text, p_key_id text, p_new_key_id text, p_secret_hash text, p_hint text, p_actor text, p_overlap integer)
RETURNS TABLE (revoked_key_id text, key_id text, tenant_id text, label text, status text, created_at text, created_by text)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
  v_old api_keys%ROWTYPE;
  -- Variables, not now() or a time's sum (STABLE) in the UPDATE's CASE, which a distributed cluster refuses (docs/scaling.md).
  v_now timestamptz := now();
  v_overlap_until timestamptz := CASE WHEN p_overlap > 0 THEN v_now + make_interval(secs => p_overlap) END;
BEGIN
  PERFORM member_actor_check(p_tenant_id, p_actor, 'developer');
  -- The successor is the rotator's: their removal waits for it (as for a new key; api_key_create()).
  PERFORM member_hold(p_tenant_id, p_actor);
  -- The row lock makes concurrent rotations of one key take turns; the second finds it revoked.
  v_old := api_key_lock_active(p_tenant_id, p_key_id);
  IF v_old.key_id IS NULL THEN
    RETURN; -- unknown, or another tenant's: the caller answers 404
  END IF;
  -- The successor replaces an active key: only the total grows.
  PERFORM api_keys_check_caps(p_tenant_id, false);
  -- The successor does what the old key did: the same label and properties.
  INSERT INTO api_keys (key_id, tenant_id, label, secret_hash, hint, created_by, expires_at, enabled, actions,
                        protect_per_day, per_second, burst, allowed_ips, metadata)
    VALUES (p_new_key_id, p_tenant_id, v_old.label, p_secret_hash, p_hint, p_actor, v_old.expires_at, v_old.enabled, v_old.actions,
            v_old.protect_per_day, v_old.per_second, v_old.burst, v_old.allowed_ips, v_old.metadata);
  PERFORM key_route_add(p_tenant_id, p_new_key_id, p_secret_hash);
  UPDATE api_keys k SET status = 'revoked', revoked_at = v_now, replaced_by = p_new_key_id, revoked_by = p_actor,
         overlap_until = v_overlap_until
  WHERE k.tenant_id = p_tenant_id AND k.key_id = p_key_id;
  RETURN QUERY
    SELECT p_key_id, k.key_id, k.tenant_id, k.label, k.status, iso_time(k.created_at), k.created_by
    FROM api_keys k WHERE k.tenant_id = p_tenant_id AND k.key_id = p_new_key_id;
END $$;
COMMENT ON FUNCTION api_key_rotate(text, text, text, text, text, text, integer) IS
  'Revokes an active key (replaced_by = the new key) and issues its successor with the same label and properties, in one transaction; '
  'with p_overlap > 0 seconds the old secret is still accepted until overlap_until. No row: not this tenant''s key. WK001: the key is not active; '
  'WK003: the tenant keeps api_keys_total_cap() keys.';

-- Revoking a key: the one writer of a revocation, for the revoke route and for a member's removal
-- (member_remove()). An active key is revoked by p_actor; a key rotated with an overlap still
-- running has its overlap ended (its revoked_at and revoked_by stay); no row when the tenant has no
-- such key. The api_keys_guard trigger refuses (WK001) any other revoked key.
CREATE FUNCTION api_key_revoke(p_tenant_id text, p_key_id text, p_actor text)
RETURNS TABLE (key_id text, status text, revoked_at text, revoked_by text)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
  -- The time as a variable and formed after the update: a distributed cluster refuses now() in
  -- COALESCE and iso_time() in RETURNING (docs/scaling.md).
  v_now timestamptz := now();
  v api_keys;
BEGIN
  UPDATE api_keys k SET status = 'revoked', revoked_at = coalesce(k.revoked_at, v_now),
         revoked_by = CASE WHEN k.status = 'active' THEN p_actor ELSE k.revoked_by END, overlap_until = NULL
   WHERE k.tenant_id = p_tenant_id AND k.key_id = p_key_id
  RETURNING k.* INTO v;
  IF FOUND THEN
    RETURN QUERY SELECT v.key_id, v.status, iso_time(v.revoked_at), v.revoked_by;
  END IF;
END $$;
COMMENT ON FUNCTION api_key_revoke(text, text, text) IS
  'Revokes the tenant''s active key (revoked_by p_actor) or ends a rotated key''s overlap; no row: no such key. WK001: revoked already, with no overlap running.';

-- The keys a member created that still work, oldest first: active ones, and ones rotated with an
-- overlap still running. p_lock: locked for a change (member_remove() revokes them).
CREATE FUNCTION api_keys_of_member(p_tenant_id text, p_member_id text, p_lock boolean)
RETURNS TABLE (key_id text, label text, hint text, created_at timestamptz)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
BEGIN
  IF p_lock THEN
    RETURN QUERY SELECT k.key_id, k.label, k.hint, k.created_at FROM api_keys k
      WHERE k.tenant_id = p_tenant_id AND k.created_by = p_member_id AND (k.status = 'active' OR k.overlap_until > now())
      ORDER BY k.created_at, k.key_id FOR UPDATE;
  ELSE
    RETURN QUERY SELECT k.key_id, k.label, k.hint, k.created_at FROM api_keys k
      WHERE k.tenant_id = p_tenant_id AND k.created_by = p_member_id AND (k.status = 'active' OR k.overlap_until > now())
      ORDER BY k.created_at, k.key_id;
  END IF;
END $$;
COMMENT ON FUNCTION api_keys_of_member(text, text, boolean) IS
  'The keys of the tenant that p_member_id created and that still work (active, or rotated with an overlap running), oldest first; locked FOR UPDATE when p_lock.';

-- One page of a tenant's keys, newest first, after the key at (p_after_at, p_after_key) when
-- given; never the secret hash. `page_position` is created_at to the microsecond, for the next cursor.
CREATE FUNCTION api_keys_page(p_tenant_id text, p_after_at timestamptz, p_after_key text, p_limit integer)
RETURNS TABLE (key_id text, tenant_id text, label text, status text, created_at text,
               last_used_at text, revoked_at text, hint text, created_by text, revoked_by text,
               expires_at text, enabled boolean, actions text[], limits jsonb, allowed_ips text[], metadata jsonb,
               overlap_until text, page_position text)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
    SELECT k.key_id, k.tenant_id, k.label, k.status, iso_time(k.created_at),
           iso_time(k.last_used_at), iso_time(k.revoked_at), k.hint, k.created_by, k.revoked_by,
           iso_time(k.expires_at), k.enabled, k.actions,
           jsonb_strip_nulls(jsonb_build_object('protect_per_day', k.protect_per_day, 'per_second', k.per_second, 'burst', k.burst)),
           k.allowed_ips::text[], k.metadata, iso_time(k.overlap_until),
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
-- key, its status and what it may do (expiry and overlap as epoch milliseconds), the tenant's plan, its active policy version (NULL policy_id: the built-in
-- default) and its verdicts for the features keys call, as arrays aligned with `features`.
-- A secret's key is found through its route (key_routes) and then read in its tenant, by its key:
-- the routes first, then one tenant at a time, every statement naming its tenant, which a
-- cluster distributed by tenant runs on that tenant's shards alone (docs/scaling.md).
-- last_used_at is written at most once a minute, and only on rows no one else holds: a batch never
-- waits on another (two instances' batches cannot deadlock), and a revoke in progress is left to
-- finish. The read is a later statement, so it sees a revoke that committed meanwhile.
-- plan_cache_mode: PL/pgSQL keeps a statement's plan, but PostgreSQL would still plan this one
-- again per call whenever it guessed a custom plan pays, which it never does here. Probes by
-- primary key and enable_seqscan off, so that a plan kept from a new database's small tables, or
-- from their statistics, cannot turn into a scan as tenants and keys grow
-- (docs/performance.md, "Plans and a growing log").
CREATE FUNCTION api_key_contexts(p_secret_hashes jsonb)
RETURNS TABLE (secret_hash text, key_id text, tenant_id text, status text, plan text,
               policy_id text, policy_version integer, policy_hash text,
               features text[], verdicts text[], required_plans text[],
               expires_ms double precision, enabled boolean, actions text[], protect_per_day integer,
               per_second integer, burst integer, allowed_ips text[], overlap_ms double precision)
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off AS $$
#variable_conflict use_column
DECLARE
  v_hashes text[] := ARRAY(SELECT DISTINCT h FROM jsonb_array_elements_text(p_secret_hashes) AS h);
  v_tenant text;
  v_keys text[];
  v_key_hashes text[];
  v_due text[];
  v_key text;
BEGIN
  -- Each tenant of the batch with its keys, and each key's secret hash at the same place.
  FOR v_tenant, v_keys, v_key_hashes IN
    SELECT r.tenant_id, array_agg(r.key_id ORDER BY r.key_id), array_agg(r.secret_hash ORDER BY r.key_id)
    FROM key_routes r WHERE r.secret_hash = ANY (v_hashes)
    GROUP BY r.tenant_id ORDER BY r.tenant_id
  LOOP
    -- The keys due a touch, locked unless someone holds them; then updated by their keys.
    v_due := '{}';
    FOR v_key IN
      SELECT s.key_id FROM api_keys s
      WHERE s.tenant_id = v_tenant AND s.key_id = ANY (v_keys) AND s.status = 'active'
        AND (s.last_used_at IS NULL OR s.last_used_at < now() - interval '60 seconds')
      FOR UPDATE SKIP LOCKED
    LOOP
      v_due := v_due || v_key;
    END LOOP;
    IF cardinality(v_due) > 0 THEN
      UPDATE api_keys k SET last_used_at = now() WHERE k.tenant_id = v_tenant AND k.key_id = ANY (v_due);
    END IF;
    RETURN QUERY
      WITH called AS MATERIALIZED (
        -- The features keys call, each with its required plan's rank.
        SELECT f.feature, f.required_plan, f.access_mode, rp.rank
        FROM features f JOIN plans rp ON rp.plan = f.required_plan
        WHERE f.feature IN ('simulate', 'protect', 'execute')
      )
      SELECT v_key_hashes[array_position(v_keys, k.key_id)], k.key_id, k.tenant_id, k.status, t.plan, p.policy_id, p.version, p.hash,
             ARRAY(SELECT c.feature FROM called c ORDER BY c.feature),
             ARRAY(SELECT feature_verdict(tp.rank, c.rank, c.access_mode,
                                          EXISTS (SELECT 1 FROM feature_grants g WHERE g.tenant_id = v_tenant AND g.feature = c.feature))
                   FROM called c ORDER BY c.feature),
             ARRAY(SELECT c.required_plan FROM called c ORDER BY c.feature),
             (extract(epoch FROM k.expires_at) * 1000)::double precision, k.enabled, k.actions, k.protect_per_day,
             k.per_second, k.burst, k.allowed_ips::text[], (extract(epoch FROM k.overlap_until) * 1000)::double precision
      FROM api_keys k
      JOIN tenants t ON t.tenant_id = v_tenant
      JOIN plans tp ON tp.plan = t.plan
      LEFT JOIN (
        SELECT po.policy_id, po.version, po.hash FROM policies po WHERE po.tenant_id = v_tenant ORDER BY po.version DESC LIMIT 1
      ) p ON true
      WHERE k.tenant_id = v_tenant AND k.key_id = ANY (v_keys);
  END LOOP;
END $$;
COMMENT ON FUNCTION api_key_contexts(jsonb) IS
  'For a JSON array of secret hashes: each matching key with its tenant''s plan, active policy version and its verdicts for '
  'the features keys call (arrays aligned with features); touches last_used_at at most once a minute, never waiting on a locked key row.';

-- What a key's context depends on (api_key_contexts()): the key's status and properties, its tenant's plan,
-- policies and feature grants, and the plans and features catalogs. Every change to one of them,
-- whoever makes it (a route, an operator script, psql), moves the tenant's key_context_epoch or,
-- for the catalogs, catalog_revision() (sql/schema/02_plans.sql), so a context read earlier may be
-- reused exactly while their sum (tenant_key_context_epochs()) has not moved.
CREATE FUNCTION tenants_key_context_epoch() RETURNS trigger
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF NEW.plan IS DISTINCT FROM OLD.plan THEN
    NEW.key_context_epoch := greatest(NEW.key_context_epoch, OLD.key_context_epoch + 1);
  END IF;
  IF NEW.key_context_epoch < OLD.key_context_epoch THEN
    RAISE EXCEPTION 'the key context epoch of % never goes back', OLD.tenant_id USING ERRCODE = 'check_violation';
  END IF;
  -- Heard at commit by a process that holds contexts in memory (the embedded database's service,
  -- one server). Not from a shard of a cluster (tenants_102008), where no one listens and a
  -- NOTIFY would stop a transaction over several workers from committing (docs/scaling.md).
  IF NEW.key_context_epoch > OLD.key_context_epoch AND TG_TABLE_NAME = 'tenants' THEN
    PERFORM pg_notify('key_context', NEW.tenant_id);
  END IF;
  RETURN NEW;
END $$;
COMMENT ON FUNCTION tenants_key_context_epoch() IS
  'A plan change moves the tenant''s key_context_epoch; the epoch never goes back (set back, it could match a context read before a change); '
  'every move is announced on channel key_context with the tenant id as payload (on one server: not from a cluster''s shard).';
CREATE TRIGGER tenants_key_context_epoch BEFORE UPDATE ON tenants
  FOR EACH ROW EXECUTE FUNCTION tenants_key_context_epoch();

CREATE FUNCTION key_context_changed() RETURNS trigger
LANGUAGE plpgsql VOLATILE AS $$
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

-- A catalog changed: every tenant's contexts may have. Their epochs need not move (they add
-- catalog_revision(), sql/schema/02_plans.sql); a process holding contexts is told of each tenant,
-- as for an epoch's move. On one server only: on a cluster this trigger fires on a reference
-- table's copies, where no one listens and no other table may be read (docs/scaling.md).
CREATE FUNCTION catalogs_key_context() RETURNS trigger
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF TG_TABLE_NAME IN ('plans', 'features') THEN
    PERFORM pg_notify('key_context', t.tenant_id) FROM tenants t;
  END IF;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION catalogs_key_context() IS
  'After a change of the plans or features catalog: announces every tenant on channel key_context (on one server: not from a cluster''s shard).';

-- The epochs of the tenants named, for reusing contexts read earlier (src/keys/authenticate.ts):
-- each tenant's key_context_epoch plus catalog_revision(), both of which only grow, so the sum
-- moves with every change a context depends on. A function so that PGlite, which plans every
-- unnamed statement anew, keeps its plan.
-- enable_seqscan off: PL/pgSQL keeps this plan, and one made on statistics of a few tenants would
-- keep a scan of all of them. jit off, here and with every enable_seqscan off: a scan that cannot
-- be avoided (catalog_revision()'s sums over the catalogs) is then costed 10^10, far past
-- jit_above_cost, and PostgreSQL compiled the statement at each call (60 to 100 ms an epoch check,
-- every API-key request on PostgreSQL). STABLE: it reads with its caller's snapshot.
CREATE FUNCTION tenant_key_context_epochs(p_tenant_ids text[])
RETURNS TABLE (tenant_id text, key_context_epoch bigint)
LANGUAGE plpgsql STABLE SET enable_seqscan = off SET jit = off AS $$
#variable_conflict use_column
DECLARE
  v_catalogs bigint := catalog_revision();
BEGIN
  RETURN QUERY SELECT t.tenant_id, t.key_context_epoch + v_catalogs FROM tenants t WHERE t.tenant_id = ANY (p_tenant_ids);
END $$;
COMMENT ON FUNCTION tenant_key_context_epochs(text[]) IS
  'Each named tenant''s key_context_epoch plus catalog_revision(): moves with every change of what the tenant''s key contexts depend on.';

-- A key's status (revoke, rotation) and what it may do (PATCH); last_used_at, written by lookups,
-- and metadata, which no request reads, move nothing.
CREATE TRIGGER api_keys_key_context AFTER UPDATE ON api_keys
  FOR EACH ROW WHEN ((OLD.status, OLD.expires_at, OLD.enabled, OLD.actions, OLD.protect_per_day, OLD.per_second, OLD.burst,
                      OLD.allowed_ips, OLD.overlap_until)
                     IS DISTINCT FROM (NEW.status, NEW.expires_at, NEW.enabled, NEW.actions, NEW.protect_per_day, NEW.per_second, NEW.burst,
                      NEW.allowed_ips, NEW.overlap_until))
  EXECUTE FUNCTION key_context_changed();
-- The catalogs: a plan's rank or limits, a feature's required plan or access mode (never deleted
-- nor truncated: catalogs_guard()).
CREATE TRIGGER plans_key_context AFTER INSERT OR UPDATE ON plans
  FOR EACH STATEMENT EXECUTE FUNCTION catalogs_key_context();
CREATE TRIGGER features_key_context AFTER INSERT OR UPDATE ON features
  FOR EACH STATEMENT EXECUTE FUNCTION catalogs_key_context();

-- A key's own limits (docs/api.md, "Keys for agents") -----------------------------------------

-- limits.per_second and limits.burst: a token bucket per key, shared by every instance. Only keys
-- with a rate take this path (src/keys/authenticate.ts), one statement per request.
CREATE TABLE api_key_rate_buckets (
  tenant_id     text NOT NULL,
  key_id        text NOT NULL,
  tokens        double precision NOT NULL,
  refreshed_at  timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, key_id),
  FOREIGN KEY (tenant_id, key_id) REFERENCES api_keys (tenant_id, key_id)
);

-- enable_seqscan off: PL/pgSQL keeps the plan of the bucket's update by its key, and one made on
-- statistics of a few keys would keep a scan of all of them.
CREATE FUNCTION api_key_rate_take(p_tenant_id text, p_key_id text, p_per_second integer, p_burst integer)
RETURNS TABLE (allowed boolean, retry_after integer)
LANGUAGE plpgsql VOLATILE SET enable_seqscan = off SET jit = off AS $$
DECLARE
  v_now timestamptz := clock_timestamp();
  v_tokens double precision;
BEGIN
  INSERT INTO api_key_rate_buckets AS b (tenant_id, key_id, tokens, refreshed_at) VALUES (p_tenant_id, p_key_id, p_burst, v_now)
  ON CONFLICT (tenant_id, key_id) DO UPDATE
    SET tokens = least(p_burst::double precision, b.tokens + greatest(0, extract(epoch FROM v_now - b.refreshed_at)) * p_per_second),
        refreshed_at = greatest(b.refreshed_at, v_now)
  RETURNING b.tokens INTO v_tokens;
  IF v_tokens >= 1 THEN
    UPDATE api_key_rate_buckets b SET tokens = b.tokens - 1 WHERE b.tenant_id = p_tenant_id AND b.key_id = p_key_id;
    RETURN QUERY SELECT true, 0;
  ELSE
    RETURN QUERY SELECT false, greatest(1, ceil((1 - v_tokens) / p_per_second))::integer;
  END IF;
END $$;
COMMENT ON FUNCTION api_key_rate_take(text, text, integer, integer) IS
  'Takes one token of the key''s bucket (refilled at p_per_second a second up to p_burst, by the database''s clock): allowed, or not and the '
  'whole seconds until a token is back.';

-- limits.protect_per_day: the protects a key's limit let through per UTC day, counted only for
-- keys that have one (set during a day, it counts from then).
CREATE TABLE api_key_usage_daily (
  tenant_id      text NOT NULL,
  key_id         text NOT NULL,
  day            date NOT NULL,
  protect_count  integer NOT NULL DEFAULT 0 CHECK (protect_count >= 0),
  PRIMARY KEY (tenant_id, key_id, day),
  FOREIGN KEY (tenant_id, key_id) REFERENCES api_keys (tenant_id, key_id)
);

CREATE FUNCTION api_key_protect_take(p_tenant_id text, p_key_id text, p_limit integer)
RETURNS TABLE (allowed boolean, used integer)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_day date := (now() AT TIME ZONE 'UTC')::date;
  v_used integer;
BEGIN
  INSERT INTO api_key_usage_daily AS u (tenant_id, key_id, day, protect_count) VALUES (p_tenant_id, p_key_id, v_day, 1)
  ON CONFLICT (tenant_id, key_id, day) DO UPDATE SET protect_count = u.protect_count + 1 WHERE u.protect_count < p_limit
  RETURNING u.protect_count INTO v_used;
  IF v_used IS NULL THEN
    RETURN QUERY SELECT false, p_limit;
  ELSE
    RETURN QUERY SELECT true, v_used;
  END IF;
END $$;
COMMENT ON FUNCTION api_key_protect_take(text, text, integer) IS
  'Counts one protect of the key in today''s UTC day if fewer than p_limit were counted: allowed and the count, or not allowed.';

-- key.expiring: told 7 days and 1 day before a key expires --------------------------------------

-- The notices given, so each threshold is told once per key and expiry.
CREATE TABLE api_key_expiry_notices (
  tenant_id   text NOT NULL,
  key_id      text NOT NULL,
  expires_at  timestamptz NOT NULL,
  threshold   text NOT NULL CHECK (threshold IN ('7d', '1d')),
  noticed_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, key_id, expires_at, threshold),
  FOREIGN KEY (tenant_id, key_id) REFERENCES api_keys (tenant_id, key_id)
);

-- The active, enabled keys whose expiry is within a threshold and not told yet for that expiry
-- (the nearer threshold only, when both are crossed at once).
CREATE FUNCTION api_keys_expiring(p_now timestamptz)
RETURNS TABLE (tenant_id text, key_id text, label text, expires_at timestamptz, threshold text)
LANGUAGE plpgsql STABLE AS $$
BEGIN
  -- PL/pgSQL rather than SQL, as member_session().
  RETURN QUERY
  SELECT k.tenant_id, k.key_id, k.label, k.expires_at,
         CASE WHEN k.expires_at - p_now <= interval '1 day' THEN '1d' ELSE '7d' END
  FROM api_keys k
  WHERE k.status = 'active' AND k.expires_at > p_now AND k.expires_at - p_now <= interval '7 days'
    AND NOT EXISTS (
      SELECT 1 FROM api_key_expiry_notices n
      WHERE n.tenant_id = k.tenant_id AND n.key_id = k.key_id AND n.expires_at = k.expires_at
        AND n.threshold = CASE WHEN k.expires_at - p_now <= interval '1 day' THEN '1d' ELSE '7d' END);
END $$;
COMMENT ON FUNCTION api_keys_expiring(timestamptz) IS
  'Active keys whose expires_at is 7 days or less (threshold 7d) or 1 day or less (1d) after p_now and not yet told of for that expiry and threshold.';

CREATE INDEX api_keys_expires_idx ON api_keys (expires_at) WHERE status = 'active' AND expires_at IS NOT NULL;

-- Records each crossing and tells the tenant's webhooks (webhook_emit(), sql/schema/04_webhooks.sql):
-- event key.expiring, data {key_id, label, expires_at, threshold}.
-- Run by the service every minute (src/keys/expiring.ts); safe to run from several instances at once.
CREATE FUNCTION api_keys_expiring_sweep()
RETURNS TABLE (tenant_id text, key_id text, threshold text, queued integer)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
  v record;
BEGIN
  FOR v IN SELECT e.* FROM api_keys_expiring(now()) e ORDER BY e.tenant_id, e.key_id LOOP
    INSERT INTO api_key_expiry_notices (tenant_id, key_id, expires_at, threshold) VALUES (v.tenant_id, v.key_id, v.expires_at, v.threshold)
    ON CONFLICT DO NOTHING;
    IF NOT FOUND THEN
      CONTINUE; -- another instance told it meanwhile
    END IF;
    RETURN QUERY SELECT v.tenant_id, v.key_id, v.threshold,
      webhook_emit(v.tenant_id, 'key.expiring',
                   jsonb_build_object('key_id', v.key_id, 'label', v.label, 'expires_at', iso_time(v.expires_at), 'threshold', v.threshold));
  END LOOP;
END $$;
COMMENT ON FUNCTION api_keys_expiring_sweep() IS
  'Tells of every key crossing 7 days or 1 day before its expiry (api_keys_expiring()) once: records it in api_key_expiry_notices and queues '
  'webhook_emit(tenant, ''key.expiring'', {key_id, label, expires_at, threshold}) in the same transaction; returns what it told and how many deliveries it queued.';
