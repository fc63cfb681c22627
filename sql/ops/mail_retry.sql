-- Send a pending (waiting after failed attempts) message now, with a fresh set of attempts.
--   psql "$DATABASE_URL" -v id=42 -f sql/ops/mail_retry.sql
\set ON_ERROR_STOP on
SELECT id, kind, to_email, status, attempts, next_attempt_at FROM ops_mail_retry(:'id'::bigint);
