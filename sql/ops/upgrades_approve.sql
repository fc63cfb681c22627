-- Approve one request: the tenant's plan changes in the same transaction, and the tenant is emailed.
--   psql "$DATABASE_URL" -v request_id=upgr_... -v reviewer="$USER" -f sql/ops/upgrades_approve.sql
\set ON_ERROR_STOP on
SELECT request_id, tenant_id, status, plan, reviewed_by, reviewed_at FROM upgrade_request_approve(:'request_id', :'reviewer');
