-- The mail outbox, newest first (at most 100): status pending, sent, failed or all.
--   psql "$DATABASE_URL" -v status=all -f sql/ops/mail_list.sql
\set ON_ERROR_STOP on
SELECT id, kind, to_email, tenant_id, status, attempts, next_attempt_at, last_error, created_at, sent_at FROM ops_mail_list(:'status');
