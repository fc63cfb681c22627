-- Test only: a plan change outside an approved upgrade. $1 tenant_id, $2 plan
UPDATE tenants SET plan = $2 WHERE tenant_id = $1 RETURNING plan;
