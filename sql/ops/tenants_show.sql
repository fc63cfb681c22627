-- One tenant: plan, verification, active keys, granted features, upgrade history.
--   psql "$DATABASE_URL" -v tenant_id=cust_... -f sql/ops/tenants_show.sql
\set ON_ERROR_STOP on
SELECT tenant_id, email, plan, email_verified, created_at, keys_active, granted_features, upgrade_requests FROM ops_tenant_show(:'tenant_id');
