-- Tests only: a pending upgrade request of the tenant from its current plan, made straight in SQL
-- (see plan_set_as_approved.sql). $1 request_id, $2 tenant_id, $3 requested plan
-- The table aliased: a distributed cluster sends the RETURNING of an INSERT ... SELECT to a shard,
-- where the table's own name names nothing.
INSERT INTO upgrade_requests AS u (request_id, tenant_id, from_plan, requested_plan, reason)
SELECT $1, t.tenant_id, t.plan, $3, 'tests' FROM tenants t WHERE t.tenant_id = $2
RETURNING u.request_id;
