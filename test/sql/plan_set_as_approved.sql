-- Tests only: moves a tenant up to a plan the way an approved upgrade does (the flag that
-- tenants_plan_guard accepts is set first, in this statement). $1 tenant_id, $2 plan
WITH flag AS MATERIALIZED (SELECT set_config('warden.approving_upgrade', $1, true) AS tenant)
UPDATE tenants SET plan = $2 FROM flag WHERE tenants.tenant_id = $1 AND flag.tenant = $1
RETURNING plan;
