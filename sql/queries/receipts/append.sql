-- Stores a decision as the tenant's next receipt and counts the quota, all or nothing.
-- $1 receipt_id, $2 tenant_id, $3 key_id, $4 kind, $5 request_id, $6 timestamp (ISO, ms, Z),
-- $7 decision, $8 payload JCS text, $9 content_hash, $10 signature, $11 protect receipt_id (execute) or null
SELECT seq, prev_hash, chain_hash, quota_limit, quota_used
FROM receipt_append($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11);
