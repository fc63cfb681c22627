-- Tests only: makes an address's pending messages due now, as if their backoff had passed. $1 recipient
UPDATE outbox SET next_attempt_at = now() WHERE channel = 'mail' AND recipient = $1 AND status = 'pending' RETURNING id;
