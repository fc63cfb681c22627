-- Lays the baseline out on a Citus cluster (docs/deployment.md, "On Citus"; docs/scaling.md):
-- run by `warden migrate` right after the baseline, in its transaction, when the database has the
-- citus extension; never on one server or the embedded database.
--
--   * every tenant table distributed by tenant_id, co-located with tenants;
--   * the catalogs, signing keys, server secrets, people and the routes as reference tables;
--   * the delivery queue (outbox), the sign-in buckets and the schema's version on the coordinator;
--   * the functions the baseline made while their tables were local copied to the workers.
--
-- Citus refuses to distribute a table that another table still references, so the foreign keys
-- are dropped, the tables laid out, and the keys added again; a key Citus cannot keep (a reference
-- table or the coordinator's queue pointing into the shards) is left out, as docs/scaling.md lists.
-- A table of the schema in none of the lists below stops the migration: each new table is placed
-- on purpose.
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';
-- The guard triggers of the tenant tables run on the shards (docs/scaling.md, "Notifications, catalogs and queues on a cluster").
SET LOCAL citus.enable_unsafe_triggers TO on;

DO $$
DECLARE
  tenant_tables text[] := ARRAY[
    'tenants', 'members', 'member_invitations', 'api_keys', 'api_key_rate_buckets', 'api_key_usage_daily',
    'api_key_expiry_notices', 'receipts', 'receipt_heads', 'receipt_tree_nodes', 'usage_daily', 'usage_counters',
    'policies', 'policy_tests', 'upgrade_requests', 'feature_grants', 'approvals', 'approval_votes', 'audit_outbox',
    'idempotency_keys', 'webhooks', 'webhook_deliveries', 'entity_heads', 'entities', 'mcp_gateways', 'mcp_gateway_secrets',
    'oauth_grants', 'oauth_codes', 'oauth_tokens'];
  reference_tables text[] := ARRAY[
    'plans', 'features', 'signing_keys', 'server_secrets', 'accounts', 'auth_tokens', 'session_revocations',
    'mfa_totp', 'mfa_recovery_codes', 'key_routes', 'invitation_routes', 'member_routes', 'mcp_gateway_routes',
    'oauth_clients'];
  coordinator_tables text[] := ARRAY['outbox', 'auth_rate_limits', 'schema_version'];
  placed text[] := tenant_tables || reference_tables || coordinator_tables;
  unplaced text[];
  fk record;
  kept jsonb := '[]';
  t text;
  f regprocedure;
BEGIN
  SELECT array_agg(c.relname ORDER BY c.relname) INTO unplaced
  FROM pg_class c
  WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p') AND c.relname <> ALL (placed);
  IF unplaced IS NOT NULL THEN
    RAISE EXCEPTION 'tables not placed on the cluster (sql/citus/distribute.sql): %', unplaced;
  END IF;

  FOR fk IN
    SELECT c.conrelid::regclass::text AS child, c.confrelid::regclass::text AS parent, c.conname, pg_get_constraintdef(c.oid) AS def
    FROM pg_constraint c
    WHERE c.contype = 'f' AND c.connamespace = 'public'::regnamespace
    ORDER BY c.conrelid::regclass::text, c.conname
  LOOP
    kept := kept || jsonb_build_array(to_jsonb(fk));
    EXECUTE format('ALTER TABLE %I DROP CONSTRAINT %I', fk.child, fk.conname);
  END LOOP;

  FOREACH t IN ARRAY reference_tables LOOP
    PERFORM create_reference_table(t);
  END LOOP;
  PERFORM create_distributed_table('tenants', 'tenant_id');
  FOREACH t IN ARRAY tenant_tables[2:] LOOP
    PERFORM create_distributed_table(t, 'tenant_id', colocate_with => 'tenants');
  END LOOP;

  -- A shard may point into its own shard group or at a reference table; a reference table only at
  -- another; the coordinator's tables at nothing distributed.
  FOR fk IN SELECT * FROM jsonb_to_recordset(kept) AS k(child text, parent text, conname text, def text) LOOP
    IF (fk.child = ANY (tenant_tables) AND (fk.parent = ANY (tenant_tables) OR fk.parent = ANY (reference_tables)))
       OR (fk.child = ANY (reference_tables) AND fk.parent = ANY (reference_tables))
       OR (fk.child = ANY (coordinator_tables) AND fk.parent = ANY (coordinator_tables)) THEN
      EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I %s', fk.child, fk.conname, fk.def);
    END IF;
  END LOOP;

  -- Functions whose types are a table's row were made while the table was local, and Citus did not
  -- copy them to the workers then.
  FOR f IN
    SELECT p.oid::regprocedure
    FROM pg_proc p
    WHERE p.pronamespace = 'public'::regnamespace
      AND NOT EXISTS (SELECT 1 FROM pg_dist_object o WHERE o.classid = 'pg_proc'::regclass AND o.objid = p.oid)
  LOOP
    PERFORM create_distributed_function(f);
  END LOOP;

  -- An append that names its tenant (receipt_append_tenant(): the appender's on a cluster) runs whole
  -- on that tenant's worker, every statement of it on that tenant's shards; receipt_append() itself,
  -- a batch of any tenants, runs on the coordinator, each statement routed to its tenant's shard.
  PERFORM create_distributed_function('receipt_append_tenant(text, json)', 'p_tenant_id', colocate_with => 'tenants');
  -- The log's writers run a call's tenants one at a time, each statement naming its tenant.
  CREATE OR REPLACE FUNCTION receipt_append_by_tenant() RETURNS boolean
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $f$ SELECT true $f$;
  -- One server keeps generic plans of the append's statements (docs/performance.md, "Plans and a
  -- growing log"); Citus plans a statement that joins a tenant's shard with parameters only as a
  -- custom plan, and refuses it when a generic plan is forced ("could not create distributed plan").
  ALTER FUNCTION receipt_append(json) RESET plan_cache_mode;
  ALTER FUNCTION receipt_log_store(text, receipt_append_item[]) RESET plan_cache_mode;
  ALTER FUNCTION receipt_tree_grow(text[], bigint[], bigint[]) RESET plan_cache_mode;
END $$;

-- The key lookup keeps one generic plan per statement on one server (plan_cache_mode in
-- api_key_contexts()); a cluster cannot plan its per-tenant read with the tenant still a
-- parameter, and plans each call with its values instead (docs/scaling.md).
ALTER FUNCTION api_key_contexts(jsonb) RESET plan_cache_mode;
