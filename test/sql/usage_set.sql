-- Tests only: sets a tenant's counters for a UTC day. $1 tenant_id, $2 day 'YYYY-MM-DD', $3 protect_count, $4 execute_count
INSERT INTO usage_daily (tenant_id, day, protect_count, execute_count) VALUES ($1, $2::date, $3, $4)
ON CONFLICT (tenant_id, day) DO UPDATE SET protect_count = EXCLUDED.protect_count, execute_count = EXCLUDED.execute_count
RETURNING protect_count, execute_count;
