-- Tests only: an endpoint's deliveries with their outbox rows, oldest first. $1 webhook_id
SELECT o.id, o.kind, o.recipient, o.status, o.attempts, o.data, o.last_error, iso_time(o.next_attempt_at) AS next_attempt_at,
       d.delivery_id, d.event, d.last_status_code
FROM webhook_deliveries d JOIN outbox o ON o.id = d.outbox_id
WHERE d.webhook_id = $1 ORDER BY o.id;
