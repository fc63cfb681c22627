-- Adds $2 to every usage counter of tenant $1, as another instance's appends would. $1 tenant_id, $2 add
UPDATE usage_counters SET total = total + $2 WHERE tenant_id = $1 RETURNING total;
