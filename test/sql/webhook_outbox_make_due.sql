-- Tests only: makes an endpoint's pending deliveries due now, as if their backoff had passed. $1 webhook_id
UPDATE outbox SET next_attempt_at = now()
WHERE status = 'pending' AND id IN (SELECT outbox_id FROM webhook_deliveries WHERE webhook_id = $1) RETURNING id;
