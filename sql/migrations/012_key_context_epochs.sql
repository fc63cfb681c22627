-- One round trip per protect or execute on PostgreSQL (docs/performance.md section 20).
--
-- Until now every key-authenticated request on PostgreSQL read its key (api_key_contexts(), one
-- call for the lookups in flight) and only then appended its receipt (receipt_append_batch(), one
-- call for the appends in flight): two round trips, and two calls for the server to run. The
-- service now decides a protect or execute under the context it read for the key shortly before
-- (a hint, src/keys/authenticate.ts), and the append checks in its own transaction that nothing
-- the context depends on has changed since.
--
-- What a key's context depends on (api_key_contexts()): the key's status, its tenant's plan, the
-- tenant's policies and feature grants, and the plans and features catalogs. Each tenant carries a
-- key_context_epoch that every change to one of those moves, by triggers below, whoever makes
-- the change (a route, an operator script, psql). The key lookup returns the epoch with the context
-- (queries/keys/authenticate.sql); an append item decided under a hint carries it, and the item is
-- refused (WR006, nothing stored) when its tenant's epoch is no longer that one. The service then
-- reads the key and decides again. A revoke, a new policy version, a plan change or a catalog
-- change that committed before the append began is thus seen by it, as it was seen by the lookup
-- that came first before. Checking costs one primary-key probe per item, on the append's session.

ALTER TABLE tenants ADD COLUMN key_context_epoch bigint NOT NULL DEFAULT 0 CHECK (key_context_epoch >= 0);
COMMENT ON COLUMN tenants.key_context_epoch IS
  'Moves whenever anything a key of this tenant is authorised by changes (key status, plan, policies, grants, catalogs); never goes back.';

-- An epoch only moves forward: set back, it could match a hint read before a change.
CREATE FUNCTION tenants_key_context_epoch() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.plan IS DISTINCT FROM OLD.plan THEN
    NEW.key_context_epoch := greatest(NEW.key_context_epoch, OLD.key_context_epoch + 1);
  END IF;
  IF NEW.key_context_epoch < OLD.key_context_epoch THEN
    RAISE EXCEPTION 'the key context epoch of % never goes back', OLD.tenant_id USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER tenants_key_context_epoch BEFORE UPDATE ON tenants
  FOR EACH ROW EXECUTE FUNCTION tenants_key_context_epoch();

-- Moves the epoch of the tenant named by the changed row (tenant_id of NEW, or of OLD on delete).
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

-- Moves every tenant's epoch (a catalog changed, or a table was truncated under the triggers).
CREATE FUNCTION key_context_changed_for_all() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE tenants SET key_context_epoch = key_context_epoch + 1;
  RETURN NULL;
END $$;

-- A key's status (revoke, rotation). Its identity columns never change (api_keys_guard), and
-- last_used_at, written by every lookup, moves nothing.
CREATE TRIGGER api_keys_key_context AFTER UPDATE ON api_keys
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION key_context_changed();
CREATE TRIGGER api_keys_key_context_truncate AFTER TRUNCATE ON api_keys
  FOR EACH STATEMENT EXECUTE FUNCTION key_context_changed_for_all();
-- A new policy version (versions are never updated or deleted: policies_immutable).
CREATE TRIGGER policies_key_context AFTER INSERT ON policies
  FOR EACH ROW EXECUTE FUNCTION key_context_changed();
-- A request-only feature granted or withdrawn.
CREATE TRIGGER feature_grants_key_context AFTER INSERT OR UPDATE OR DELETE ON feature_grants
  FOR EACH ROW EXECUTE FUNCTION key_context_changed();
CREATE TRIGGER feature_grants_key_context_truncate AFTER TRUNCATE ON feature_grants
  FOR EACH STATEMENT EXECUTE FUNCTION key_context_changed_for_all();
-- The catalogs: a plan's rank, a feature's required plan or access mode.
CREATE TRIGGER plans_key_context AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON plans
  FOR EACH STATEMENT EXECUTE FUNCTION key_context_changed_for_all();
CREATE TRIGGER features_key_context AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON features
  FOR EACH STATEMENT EXECUTE FUNCTION key_context_changed_for_all();

-- The items of a batch (0-based, in order) decided under a context whose tenant's epoch has moved
-- since. Items without key_epoch were decided under a context read for their own request.
CREATE FUNCTION receipt_items_stale(p_items json) RETURNS integer[]
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  v_stale integer[];
BEGIN
  SELECT coalesce(array_agg((e.ord - 1)::integer ORDER BY e.ord), '{}') INTO v_stale
  FROM json_array_elements(p_items) WITH ORDINALITY AS e(v, ord)
  LEFT JOIN LATERAL (SELECT t.key_context_epoch FROM tenants t WHERE t.tenant_id = e.v ->> 'tenant_id' LIMIT 1) t ON true
  WHERE e.v ->> 'key_epoch' IS NOT NULL
    AND t.key_context_epoch IS DISTINCT FROM (e.v ->> 'key_epoch')::bigint;
  RETURN v_stale;
END $$;
COMMENT ON FUNCTION receipt_items_stale(json) IS
  'For a JSON array of append items: the 0-based positions of those whose key_epoch is no longer their tenant''s key_context_epoch.';

-- receipt_append_batch() for items that may carry a key_epoch: the stale ones are answered WR006
-- and left out, the others appended as one batch, in the same transaction.
CREATE FUNCTION receipt_append_batch_keyed(p_items json)
RETURNS TABLE (idx integer, seq bigint, prev_hash text, chain_hash text, quota_limit integer, quota_used integer,
               error_sqlstate text, error_constraint text, error_message text)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
DECLARE
  v_stale integer[] := receipt_items_stale(p_items);
BEGIN
  IF cardinality(v_stale) = 0 THEN
    RETURN QUERY SELECT b.idx, b.seq, b.prev_hash, b.chain_hash, b.quota_limit, b.quota_used, b.error_sqlstate, b.error_constraint, b.error_message
                 FROM receipt_append_batch(p_items) b;
    RETURN;
  END IF;
  RETURN QUERY
    SELECT s, NULL::bigint, NULL::text, NULL::text, NULL::integer, NULL::integer,
           'WR006'::text, NULL::text, 'the key context this item was decided under has changed'::text
    FROM unnest(v_stale) AS s;
  -- The rest keep their order. Their claimed links may now skip a stale item, which costs
  -- receipt_append_batch() its careful path, never a wrong link.
  RETURN QUERY
    WITH kept AS (
      SELECT (e.ord - 1)::integer AS orig, e.v, (row_number() OVER (ORDER BY e.ord) - 1)::integer AS k
      FROM json_array_elements(p_items) WITH ORDINALITY AS e(v, ord)
      WHERE (e.ord - 1)::integer <> ALL (v_stale)
    )
    SELECT kept.orig, b.seq, b.prev_hash, b.chain_hash, b.quota_limit, b.quota_used, b.error_sqlstate, b.error_constraint, b.error_message
    FROM receipt_append_batch((SELECT json_agg(kept.v ORDER BY kept.k) FROM kept)) b
    JOIN kept ON kept.k = b.idx;
END $$;
COMMENT ON FUNCTION receipt_append_batch_keyed(json) IS
  'receipt_append_batch() after checking each item''s key_epoch: stale items are answered WR006 and not stored.';

-- receipt_append_item() for one item that may carry a key_epoch: WR006 when it is stale.
CREATE FUNCTION receipt_append_item_keyed(p_item jsonb)
RETURNS TABLE (seq bigint, prev_hash text, chain_hash text, quota_limit integer, quota_used integer)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
BEGIN
  IF cardinality(receipt_items_stale(json_build_array(p_item))) > 0 THEN
    RAISE EXCEPTION 'the key context this item was decided under has changed' USING ERRCODE = 'WR006';
  END IF;
  RETURN QUERY SELECT a.seq, a.prev_hash, a.chain_hash, a.quota_limit, a.quota_used FROM receipt_append_item(p_item) a;
END $$;
COMMENT ON FUNCTION receipt_append_item_keyed(jsonb) IS
  'receipt_append_item() after checking the item''s key_epoch: WR006 (nothing stored) when it is stale.';
