-- Tests only: moves a tenant up to a plan the way upgrade_request_approve() does, naming the
-- approved request that tenants_plan_guard accepts (plan_request_raw.sql, then
-- plan_request_approve_raw.sql). $1 tenant_id, $2 plan, $3 request_id
UPDATE tenants SET plan = $2, plan_request_id = $3 WHERE tenant_id = $1
RETURNING plan;
