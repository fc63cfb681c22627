-- Stores the response of a claimed request. $1 tenant_id, $2 key hash, $3 status, $4 headers (jsonb), $5 sealed body (base64)
UPDATE idempotency_keys
SET status = 'completed', response_status = $3, response_headers = $4::jsonb, response_sealed = $5, completed_at = now()
WHERE tenant_id = $1 AND key_hash = $2 AND status = 'in_progress';
