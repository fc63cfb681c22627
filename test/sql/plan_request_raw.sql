-- Tests only: a pending upgrade request of the tenant from its current plan, made straight in SQL
-- (see plan_set_as_approved.sql). $1 request_id, $2 tenant_id, $3 requested plan
INSERT INTO upgrade_requests (request_id, tenant_id, from_plan, requested_plan, reason)
SELECT $1, t.tenant_id, t.plan, $3, 'tests' FROM tenants t WHERE t.tenant_id = $2
RETURNING request_id;
