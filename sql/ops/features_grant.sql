-- Grant a request-only feature (sso, dedicated_region) to a tenant.
--   psql "$DATABASE_URL" -v tenant_id=cust_... -v feature=sso -v reviewer="$USER" -f sql/ops/features_grant.sql
\set ON_ERROR_STOP on
SELECT tenant_id, feature, granted_by, granted_at FROM feature_grant(:'tenant_id', :'feature', :'reviewer');
