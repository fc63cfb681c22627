-- Tests only: the mail outbox's rows for one address, oldest first. $1 recipient
SELECT id, kind, recipient, tenant_id, data, status, attempts, last_error,
       iso_time(next_attempt_at) AS next_attempt_at, iso_time(sent_at) AS sent_at
FROM outbox WHERE channel = 'mail' AND recipient = $1 ORDER BY id;
