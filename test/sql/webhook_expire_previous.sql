-- Tests only: the rotated-out secret's 24 hours have passed. $1 webhook_id
UPDATE webhooks SET previous_secret_until = now() - interval '1 second' WHERE webhook_id = $1 AND previous_secret_until IS NOT NULL RETURNING webhook_id;
