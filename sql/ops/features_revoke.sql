-- Withdraw a granted request-only feature.
--   psql "$DATABASE_URL" -v tenant_id=cust_... -v feature=sso -f sql/ops/features_revoke.sql
\set ON_ERROR_STOP on
SELECT tenant_id, feature, revoked FROM feature_revoke(:'tenant_id', :'feature');
