-- Tests only: the outbox rows for one address, oldest first. $1 to_email
SELECT id, kind, to_email, tenant_id, data, status, attempts, last_error,
       iso_time(next_attempt_at) AS next_attempt_at, iso_time(sent_at) AS sent_at
FROM mail_outbox WHERE to_email = $1 ORDER BY id;
