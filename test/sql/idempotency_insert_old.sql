-- Tests only: a completed idempotency record made $3 hours ago. $1 tenant_id, $2 key, $3 hours, $4 fingerprint
INSERT INTO idempotency_keys (tenant_id, idempotency_key, fingerprint, status, response_status, response_headers, response_body, created_at, completed_at)
VALUES ($1, $2, $4, 'completed', 200, '{}'::jsonb, '{"old":true}', now() - make_interval(hours => $3), now() - make_interval(hours => $3))
RETURNING idempotency_key;
