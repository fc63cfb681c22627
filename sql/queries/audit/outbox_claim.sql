-- Operators' audit events still to be signed, each tenant's oldest first, locked for this
-- transaction (others skip them): audit_outbox_claim(). $1 row count
SELECT id, tenant_id, event, operator, target, at FROM audit_outbox_claim($1::integer);
