-- Tests only: makes an address's pending messages due now, as if their backoff had passed. $1 to_email
UPDATE mail_outbox SET next_attempt_at = now() WHERE to_email = $1 AND status = 'pending' RETURNING id;
