-- Reject one request with a note the customer will read (by email and in GET /customer/upgrades).
--   psql "$DATABASE_URL" -v request_id=upgr_... -v reviewer="$USER" -v note='Please tell us more about your volume.' -f sql/ops/upgrades_reject.sql
\set ON_ERROR_STOP on
SELECT request_id, tenant_id, status, review_note, reviewed_by, reviewed_at FROM upgrade_request_reject(:'request_id', :'reviewer', :'note');
