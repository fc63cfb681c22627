-- Sets a tenant's test counter to $2 (an operator's hand edit): inserts it, or changes its total. $1 tenant_id, $2 total
INSERT INTO usage_counters (tenant_id, counter, scope, window_start, total) VALUES ($1, 'c', '*', '2030-01-01T00:00:00Z', $2)
ON CONFLICT (tenant_id, counter, scope, window_start) DO UPDATE SET total = excluded.total RETURNING total;
