-- Operators' audit events still to be signed, oldest first, locked for this transaction (others
-- skip them). $1 row count
SELECT id, tenant_id, event, operator, target, iso_time(at) AS at
FROM audit_outbox
WHERE receipt_id IS NULL
ORDER BY id
LIMIT $1
FOR UPDATE SKIP LOCKED;
