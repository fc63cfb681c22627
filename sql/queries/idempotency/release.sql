-- Gives up a claim whose request ended without a response worth replaying. $1 tenant_id, $2 key hash
DELETE FROM idempotency_keys WHERE tenant_id = $1 AND key_hash = $2 AND status = 'in_progress';
