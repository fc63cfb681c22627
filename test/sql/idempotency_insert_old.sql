-- Tests only: a completed idempotency record made $3 hours ago. $1 tenant_id, $2 key hash, $3 hours, $4 fingerprint, $5 sealed body
INSERT INTO idempotency_keys (tenant_id, key_hash, fingerprint, status, response_status, response_headers, response_sealed, created_at, completed_at)
VALUES ($1, $2, $4, 'completed', 200, '{}'::jsonb, $5, now() - make_interval(hours => $3), now() - make_interval(hours => $3))
RETURNING key_hash;
