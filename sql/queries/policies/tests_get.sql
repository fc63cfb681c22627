-- The tenant's stored policy test suite as JSON text; no row: none stored. $1 tenant_id
SELECT cases FROM policy_tests WHERE tenant_id = $1;
