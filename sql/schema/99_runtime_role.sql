-- The runtime role: what the service may do, apart from who owns the schema. The role that applies
-- the baseline (`warden migrate`) owns every table and function; the service connects as a member
-- of warden_runtime (docs/deployment.md), which holds only what requests need. It is not an owner,
-- so it can run no DDL (ALTER TABLE ... DISABLE TRIGGER included), and it has no TRUNCATE anywhere.
--
-- This file runs last in the baseline, so every table and function of the files before it, whoever
-- added them, is granted here by one rule; only the protected tables' rights are withheld below.
-- Default privileges cover what the same owner creates later in this schema. Triggers and
-- functions run as the calling role (none is SECURITY DEFINER), so a trigger's own writes need
-- these same rights.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'warden_runtime') THEN
    CREATE ROLE warden_runtime NOLOGIN;
  END IF;
  EXECUTE format('GRANT USAGE ON SCHEMA %I TO warden_runtime', current_schema());
  EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA %I TO warden_runtime', current_schema());
  EXECUTE format('GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA %I TO warden_runtime', current_schema());
  EXECUTE format('GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA %I TO warden_runtime', current_schema());
  EXECUTE format('ALTER DEFAULT PRIVILEGES IN SCHEMA %I GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO warden_runtime', current_schema());
  EXECUTE format('ALTER DEFAULT PRIVILEGES IN SCHEMA %I GRANT USAGE, SELECT ON SEQUENCES TO warden_runtime', current_schema());
  EXECUTE format('ALTER DEFAULT PRIVILEGES IN SCHEMA %I GRANT EXECUTE ON FUNCTIONS TO warden_runtime', current_schema());
END $$;

-- Stored receipts, the Merkle nodes over them and policy versions are append-only: the service
-- reads and inserts them, never updates or deletes them (their triggers refuse it too; without
-- ownership, no one of this role can switch those triggers off).
REVOKE UPDATE, DELETE ON receipts, receipt_tree_nodes, policies FROM warden_runtime;
-- Operators' audit events waiting to be signed: the service marks one appended (receipt_id,
-- appended_at) and changes nothing else of it, nor deletes it (audit_outbox_guard refuses it too).
REVOKE UPDATE, DELETE ON audit_outbox FROM warden_runtime;
GRANT UPDATE (receipt_id, appended_at) ON audit_outbox TO warden_runtime;
-- Webhook endpoints are never deleted (their status becomes deleted), and the service changes
-- only their state and secrets, never what an endpoint is (url, events, tenant, creation); a
-- delivery's log row changes only in its last status code (webhooks_guard and
-- webhook_deliveries_guard refuse the rest too).
REVOKE UPDATE, DELETE ON webhooks, webhook_deliveries FROM warden_runtime;
GRANT UPDATE (status, secret_sealed, previous_secret_sealed, previous_secret_until, disabled_at, disabled_reason, deleted_at, deleted_by)
  ON webhooks TO warden_runtime;
GRANT UPDATE (last_status_code) ON webhook_deliveries TO warden_runtime;
-- OAuth (17_oauth.sql): registered clients never change; grants, codes and tokens are never
-- deleted (a revocation is a status), a grant changes only its state and last use, a code or a
-- refresh token only its use (oauth_grant_guard refuses the rest of a grant's changes too).
REVOKE UPDATE, DELETE ON oauth_clients, oauth_grants, oauth_codes, oauth_tokens FROM warden_runtime;
GRANT UPDATE (status, revoked_at, revoked_by, revoked_reason, last_used_at) ON oauth_grants TO warden_runtime;
GRANT UPDATE (used_at) ON oauth_codes, oauth_tokens TO warden_runtime;
