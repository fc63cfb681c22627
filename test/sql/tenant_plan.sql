-- Test only. $1 tenant_id
SELECT plan FROM tenants WHERE tenant_id = $1;
