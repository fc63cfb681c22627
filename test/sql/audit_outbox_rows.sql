-- Tests only: a tenant's queued operator events, oldest first. $1 tenant_id
SELECT id, tenant_id, event, operator, target, iso_time(at) AS at, receipt_id FROM audit_outbox WHERE tenant_id = $1 ORDER BY id;
