-- Pending upgrade requests, oldest first.
--   psql "$DATABASE_URL" -f sql/ops/upgrades_list.sql
\set ON_ERROR_STOP on
SELECT request_id, tenant_id, email, current_plan, requested_plan, reason, created_at, age FROM ops_upgrades_pending();
