-- Replaces the tenant's stored policy test suite. $1 tenant_id, $2 the cases as JSON text
INSERT INTO policy_tests (tenant_id, cases) VALUES ($1, $2)
ON CONFLICT (tenant_id) DO UPDATE SET cases = EXCLUDED.cases, updated_at = now()
RETURNING cases;
