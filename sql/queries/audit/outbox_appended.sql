-- Marks a pending operator event appended as its receipt, in the transaction that appended it. $1 id, $2 receipt_id
UPDATE audit_outbox SET receipt_id = $2, appended_at = now() WHERE id = $1 AND receipt_id IS NULL
RETURNING id;
