-- Withdraw a granted request-only feature (recorded in the tenant's audit trail as the reviewer's).
--   psql "$DATABASE_URL" -v tenant_id=cust_... -v feature=sso -v reviewer="$USER" -f sql/ops/features_revoke.sql
\set ON_ERROR_STOP on
SELECT tenant_id, feature, revoked FROM feature_revoke(:'tenant_id', :'feature', :'reviewer');
