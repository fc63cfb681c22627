-- Replaces the tenant's stored policy test suite. $1 tenant_id, $2 the cases as JSON text
-- The time in VALUES, not in DO UPDATE SET, where a distributed cluster refuses now() (docs/scaling.md).
INSERT INTO policy_tests (tenant_id, cases, updated_at) VALUES ($1, $2, now())
ON CONFLICT (tenant_id) DO UPDATE SET cases = EXCLUDED.cases, updated_at = EXCLUDED.updated_at
RETURNING cases;
