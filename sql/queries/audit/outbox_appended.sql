-- Marks a pending operator event appended as its receipt, in the transaction that appended it. $1 tenant_id, $2 id, $3 receipt_id
UPDATE audit_outbox SET receipt_id = $3, appended_at = now() WHERE tenant_id = $1 AND id = $2 AND receipt_id IS NULL
RETURNING id;
