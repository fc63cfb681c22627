-- Sign a customer out everywhere: every session token of each of its members issued so far stops working at once (API keys
-- are untouched). Recorded in the tenant's audit trail as the reviewer's. Answers how many members were signed out.
--   psql "$DATABASE_URL" -v tenant_id=cust_... -v reviewer="$USER" -f sql/ops/sessions_end.sql
\set ON_ERROR_STOP on
SELECT :'tenant_id' AS tenant_id, tenant_sessions_end(:'tenant_id', :'reviewer') AS members_signed_out;
